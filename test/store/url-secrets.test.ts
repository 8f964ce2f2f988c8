// A store URL's secrets are never printed (issue 36, item 5): the userinfo password, a `password`
// or `sslpassword` in the query, an `sslkey`, and any parameter not known to be harmless are
// masked in `store status`, `serve`'s log and every failure message.
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storeFlag } from '../../src/gateway/config-store.js'
import { redactStoreUrl } from '../../src/store/redact-url.js'
import { runCli, spawnServe, tempDir } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let url: string
let work: { dir: string; cleanup: () => Promise<void> }
const children: ChildProcess[] = []
const SECRETS = ['Hunter2userinfo', 'Hunter2query', 'Hunter2sslpw', 'Hunter2unknown']

beforeAll(async () => {
  server = await startPgServer()
  url = server.createDatabase('secrets')
  work = await tempDir()
}, 120_000)
afterAll(async () => {
  await killChildren(children)
  server?.destroy()
  await work?.cleanup()
})

/** The test database's URL with every kind of secret in it (trust auth ignores them). */
const secretUrl = () =>
  `${url.replace('postgres@', `postgres:${SECRETS[0]}@`)}?password=${SECRETS[1]}&sslpassword=${SECRETS[2]}&x_token=${SECRETS[3]}&application_name=audit`

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret)
}

describe('store URL secrets (issue 36, item 5)', { timeout: 120_000 }, () => {
  it('redactStoreUrl masks the password, secret and unknown parameters, keeps harmless ones', () => {
    expect(
      redactStoreUrl(
        'postgres://u:pw@h:5432/db?password=a&sslpassword=b&sslkey=/k.pem&passfile=/p&foo=c&sslmode=require#frag',
      ),
    ).toBe('postgres://u:***@h:5432/db?password=***&sslpassword=***&sslkey=***&passfile=***&foo=***&sslmode=require')
    expect(redactStoreUrl('not a url')).toBe('postgres://…')
    expect(storeFlag('mysql://u:pw@h/db?password=Hunter2query')).toBe(
      '--store: expected a postgres:// URL, got "mysql://u:***@h/db?password=***"',
    )
  })

  it('store migrate and status print the URL redacted', async () => {
    const migrated = await runCli(['store', 'migrate', '--store', secretUrl()])
    expect(migrated.code).toBe(0)
    const status = await runCli(['store', 'status', '--store', secretUrl()])
    expect(status.code).toBe(0)
    expect(status.stdout).toContain('password=***&sslpassword=***&x_token=***&application_name=audit')
    expectNoSecret(status.stdout + status.stderr)
  })

  it('a failure to reach the store names it redacted', async () => {
    const dead = `postgres://u:${SECRETS[0]}@127.0.0.1:1/db?password=${SECRETS[1]}&sslpassword=${SECRETS[2]}&x_token=${SECRETS[3]}`
    const status = await runCli(['store', 'status', '--store', dead])
    expect(status.code).not.toBe(0)
    expect(status.stderr).toMatch(/127\.0\.0\.1:1/)
    expectNoSecret(status.stdout + status.stderr)
    const serve = await runCli(['serve', '--http', '0', '--root', work.dir, '--store', dead])
    expect(serve.code).not.toBe(0)
    expect(serve.stderr).toMatch(/PostgreSQL store/)
    expectNoSecret(serve.stdout + serve.stderr)
  })

  it('serve --verbose logs where it journals, redacted', async () => {
    const { child, stderr } = await spawnServe(
      ['--http', '0', '--root', work.dir, '--verbose', '--store', secretUrl()],
      {
        children,
      },
    )
    const err = stderr()
    expect(err).toMatch(/journaling to postgres:\/\/postgres:\*\*\*@/)
    expectNoSecret(err)
    child.kill('SIGTERM')
  })
})
