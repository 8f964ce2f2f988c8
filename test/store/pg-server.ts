// A real PostgreSQL 15 server for one test file: initdb in a temp dir owned by `postgres`, listening
// on a free loopback port (and a Unix socket in the same dir), stopped and removed by stop().
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const BIN = '/usr/lib/postgresql/15/bin'

export interface PgServer {
  readonly url: string
  readonly port: number
  readonly dir: string
  /** A fresh database on this server; returns its URL. */
  createDatabase(name: string): string
  stop(): void
  /** Stop at once, as a crash would (`pg_ctl stop -m immediate`: no checkpoint, connections cut). */
  crash(): void
  start(): void
  /** Stop and remove the data directory. */
  destroy(): void
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

function asPostgres(args: string[]): void {
  const isRoot = process.getuid?.() === 0
  const [cmd, ...rest] = isRoot ? ['runuser', '-u', 'postgres', '--', ...args] : args
  const result = spawnSync(cmd, rest, { encoding: 'utf8', timeout: 60_000 })
  if (result.status !== 0)
    throw new Error(`${args.join(' ')} failed (${result.status}): ${result.stderr || result.stdout || result.error}`)
}

export async function startPgServer(): Promise<PgServer> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-pg-'))
  chmodSync(dir, 0o700)
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  asPostgres([`${BIN}/initdb`, '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const port = await freePort()
  const conf = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    'max_connections = 300',
    'fsync = on',
    'shared_buffers = 32MB',
  ].join('\n')
  // Appended by the postgres user (the conf file is theirs).
  writeFileSync(join(dir, 'extra.conf'), `${conf}\n`)
  chmodSync(join(dir, 'extra.conf'), 0o644)
  asPostgres(['sh', '-c', `cat '${join(dir, 'extra.conf')}' >> '${join(data, 'postgresql.conf')}'`])
  const log = join(dir, 'server.log')
  const start = () => asPostgres([`${BIN}/pg_ctl`, '-D', data, '-l', log, '-w', '-t', '60', 'start'])
  const stop = () => asPostgres([`${BIN}/pg_ctl`, '-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'])
  start()
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  let running = true
  return {
    url,
    port,
    dir,
    createDatabase(name) {
      asPostgres([`${BIN}/psql`, '-h', dir, '-p', String(port), '-U', 'postgres', '-c', `CREATE DATABASE "${name}"`])
      return `postgres://postgres@127.0.0.1:${port}/${name}`
    },
    stop() {
      stop()
      running = false
    },
    crash() {
      asPostgres([`${BIN}/pg_ctl`, '-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop'])
      running = false
    },
    start() {
      start()
      running = true
    },
    destroy() {
      try {
        if (running) stop()
      } finally {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
      }
    },
  }
}
