// The per-caller credential vault's rows in the PostgreSQL store: sealed entries only (the gateway
// seals and opens them), so every instance on the database reads the secrets one CLI set.
import type { Pool } from 'pg'
import { ConfigError } from '../errors/config-error.js'
import { StoreError } from '../journal/store-error.js'
import { checkSchema, migrate } from './migrations.js'
import { redactStoreUrl as redact, scrubStoreUrl } from './redact-url.js'

/** A sealed vault entry as a row holds it (dates as ISO 8601). */
export interface VaultRow {
  readonly server: string
  readonly subject: string
  readonly updatedAt: string
  readonly iv: string
  readonly tag: string
  readonly data: string
}

/** The vault table of one store. */
export interface VaultRows {
  get(server: string, subject: string): Promise<VaultRow | undefined>
  put(row: VaultRow): Promise<void>
  delete(server: string, subject: string): Promise<boolean>
  /** Every entry's server, subject and date (no sealed data). */
  list(): Promise<{ server: string; subject: string; updatedAt: string }[]>
  close(): Promise<void>
}

interface Selected {
  server: string
  subject: string
  updated_at: Date
  iv: string
  tag: string
  data: string
}

/**
 * Open the vault table of the store at `url` (a small pool of its own), applying due migrations
 * first unless `migrateNow` is false, in which case an older schema is refused.
 */
export async function openVaultRows(url: string, migrateNow = true): Promise<VaultRows> {
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url))
    throw new ConfigError('--store', 'expected a postgres:// or postgresql:// URL')
  const { default: pg } = await import('pg')
  // Idle connections do not hold the process open: a CLI run ends once its query did.
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: 10_000,
    allowExitOnIdle: true,
  })
  pool.on('error', () => {})
  const failure = (what: string, error: unknown): Error => {
    if (error instanceof StoreError || error instanceof ConfigError) return error
    // A driver's message may quote the URL: never a password in a message.
    const message = scrubStoreUrl(error instanceof Error ? error.message : String(error), url)
    return new StoreError('STORE_UNAVAILABLE', `PostgreSQL store ${redact(url)}: vault ${what} failed: ${message}`, {
      cause: error,
    })
  }
  const run = async <T>(what: string, body: () => Promise<T>): Promise<T> => {
    try {
      return await body()
    } catch (error) {
      throw failure(what, error)
    }
  }
  await run('open', async () => {
    const client = await pool.connect()
    try {
      if (migrateNow) await migrate(client)
      else {
        const { version, due } = await checkSchema(client)
        if (due > 0)
          throw new StoreError(
            'STORE_SCHEMA',
            `the PostgreSQL store has schema version ${version}, older than this toolgate needs: run "toolgate store migrate"`,
          )
      }
    } finally {
      client.release()
    }
  }).catch(async (error: unknown) => {
    await pool.end().catch(() => {})
    throw error
  })
  return {
    get: (server, subject) =>
      run('read', async () => {
        const { rows } = await pool.query<Selected>(
          'SELECT server, subject, updated_at, iv, tag, data FROM toolgate_vault WHERE server = $1 AND subject = $2',
          [server, subject],
        )
        const row = rows[0]
        if (row === undefined) return undefined
        const { updated_at, ...rest } = row
        return { ...rest, updatedAt: updated_at.toISOString() }
      }),
    put: (row) =>
      run('write', async () => {
        await pool.query(
          `INSERT INTO toolgate_vault (server, subject, iv, tag, data, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (server, subject) DO UPDATE SET iv = $3, tag = $4, data = $5, updated_at = $6`,
          [row.server, row.subject, row.iv, row.tag, row.data, row.updatedAt],
        )
      }),
    delete: (server, subject) =>
      run('delete', async () => {
        const { rowCount } = await pool.query('DELETE FROM toolgate_vault WHERE server = $1 AND subject = $2', [
          server,
          subject,
        ])
        return (rowCount ?? 0) > 0
      }),
    list: () =>
      run('list', async () => {
        const { rows } = await pool.query<Pick<Selected, 'server' | 'subject' | 'updated_at'>>(
          'SELECT server, subject, updated_at FROM toolgate_vault ORDER BY server, subject',
        )
        return rows.map((r) => ({ server: r.server, subject: r.subject, updatedAt: r.updated_at.toISOString() }))
      }),
    close: () => pool.end().catch(() => {}),
  }
}
