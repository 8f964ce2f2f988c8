// Issue 37 item 7: no container engine runs here, so CI runs the image's exact command (its
// ENTRYPOINT and CMD, then the Deployment's args) from the clean clone, with what the cluster
// would provide in its place: the ConfigMap's config file at --config, the Secret's values in the
// environment, a scratch --root, a free port for 8080 (beside another suite) and a real PostgreSQL
// for the store. Then the deploy guide as far as this machine allows: two replicas on one
// PostgreSQL, each serving an authenticated client, their calls in the one journal.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore } from '../../src/store/index.js'
import { tempDir } from '../cli/helpers.js'
import { killChildren } from '../cli/spawn-ready.js'
import { type PgServer, startPgServer } from '../store/pg-server.js'
import { find, imageRuntime, kustomizedManifests, REPO } from './deploy-files.js'

const runtime = imageRuntime()
const manifests = kustomizedManifests()
const configMap = find(manifests, 'ConfigMap') as unknown as { data: Record<string, string> }
const secret = find(manifests, 'Secret') as unknown as { stringData: Record<string, string> }
const deployment = find(manifests, 'Deployment', 'toolgate') as unknown as {
  spec: { template: { spec: { containers: { name: string; args: string[]; env: Env[] }[] } } }
}
interface Env {
  name: string
  valueFrom?: { secretKeyRef?: { key: string } }
}
const container = deployment.spec.template.spec.containers.find((c) => c.name === 'toolgate')
if (container === undefined) throw new Error('deployment.yaml: no container named toolgate')
// The Secret's token entries, each REPLACE-ME filled as an operator would: a fresh token, its SHA-256.
const tokenEntries = JSON.parse(secret.stringData.tokens ?? '[]') as { sha256: string; subject: string }[]
const tokens = tokenEntries.map((entry) => ({ subject: entry.subject, token: randomBytes(24).toString('base64url') }))
const filledTokens = JSON.stringify(
  tokenEntries.map((entry, i) => ({
    ...entry,
    sha256: createHash('sha256')
      .update(tokens[i]?.token ?? '')
      .digest('hex'),
  })),
)

let pg: PgServer
let work: { dir: string; cleanup: () => Promise<void> }
let configFile: string
const children: ChildProcess[] = []

beforeAll(async () => {
  work = await tempDir()
  configFile = path.join(work.dir, 'config.json')
  writeFileSync(configFile, configMap.data['config.json'] ?? '')
  pg = await startPgServer()
}, 120_000)

afterAll(async () => {
  await killChildren(children)
  pg?.destroy()
  await work?.cleanup()
})

/** The container's environment: each Secret-backed variable with the Secret's value (the store's given). */
function containerEnv(storeUrl: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const variable of container?.env ?? []) {
    const key = variable.valueFrom?.secretKeyRef?.key
    if (key === undefined) continue
    env[variable.name] = key === 'store-url' ? storeUrl : key === 'tokens' ? filledTokens : secret.stringData[key]
  }
  return env
}

/**
 * Run `argv` as the container would, from the clone instead of WORKDIR: `node` is this Node, 8080 is
 * a free port, and the paths the cluster mounts are scratch ones; `$(VAR)` expands from `env` as the
 * kubelet does. Resolves with the port once the gateway serves.
 */
function runAsContainer(argv: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; port: number }> {
  const mapped = argv.map((arg) => {
    if (arg === '8080') return '0'
    if (arg === '/workspace') return work.dir
    if (arg === '/etc/toolgate/config.json') return configFile
    return arg.replace(/\$\(([A-Z_]+)\)/g, (_, name: string) => env[name] ?? '')
  })
  const [command, ...args] = mapped
  expect(command).toBe('node')
  const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let err = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start within 120 s:\n${err}`)), 120_000)
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const match = /serving MCP at http:\/\/[^:]+:(\d+)\/mcp/.exec(err)
      if (match) {
        clearTimeout(timer)
        resolve({ child, port: Number(match[1]) })
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the gateway exited with ${code}:\n${err}`))
    })
  })
}

async function connect(port: number, token: string): Promise<Client> {
  const client = new Client({ name: 'deploy-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  return client
}

describe('the image’s command, run from the clone (issue 37, item 7)', { timeout: 240_000 }, () => {
  it('the Secret as shipped does not start a gateway: its tokens are placeholders', async () => {
    const env = { ...containerEnv(''), TOOLGATE_TOKENS: secret.stringData.tokens }
    await expect(runAsContainer([...runtime.entrypoint, ...runtime.cmd], env)).rejects.toThrow(
      /TOOLGATE_TOKENS\[0\]\.sha256: expected the token's SHA-256/,
    )
  })

  it('ENTRYPOINT + CMD serve on all interfaces, and only to a token of the Secret', async () => {
    const { port } = await runAsContainer([...runtime.entrypoint, ...runtime.cmd], containerEnv(''))
    const anonymous = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(anonymous.status).toBe(401)
    const alice = tokens.find((t) => t.subject === 'alice')
    if (alice === undefined) throw new Error('secret.yaml: no token for alice')
    const client = await connect(port, alice.token)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_file')
    await client.close()
  })

  it('two replicas with the Deployment’s args on one PostgreSQL: both serve, one journal holds both', async () => {
    const storeUrl = pg.createDatabase('deploy')
    const argv = [...runtime.entrypoint, ...(container?.args ?? [])]
    // The replicas start together, as a Deployment's do: the store's migration runs once, under its lock.
    const replicas = await Promise.all([
      runAsContainer(argv, containerEnv(storeUrl)),
      runAsContainer(argv, containerEnv(storeUrl)),
    ])
    writeFileSync(path.join(work.dir, 'hello.txt'), 'hello')
    for (const [i, { port }] of replicas.entries()) {
      const who = tokens[i % tokens.length]
      if (who === undefined) throw new Error('secret.yaml: no tokens')
      const client = await connect(port, who.token)
      const result = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } })
      expect(result.isError).not.toBe(true)
      await client.close()
    }
    const store = await createPostgresStore({ connectionString: storeUrl, migrate: false })
    try {
      const results = []
      for await (const { record } of store.read())
        if (record.toolName === 'read_file' && record.type === 'result') results.push(record)
      expect(results).toHaveLength(2)
    } finally {
      await store.close()
    }
  })
})
