// The config's `store` key: where the gateway keeps its journal and shared state. A string is the
// PostgreSQL URL; the object form adds the journal retention, the connection pool size and whether
// journal batches wait for the database's WAL flush.
import { redactStoreUrl } from '../store/redact-url.js'
import { isRecord } from '../util/is-record.js'

export interface StoreConfig {
  /** `postgres://…` */
  url: string
  /** Delete journal records older than this many days. */
  retentionDays?: number
  /** Most query connections per gateway instance. */
  poolSize?: number
  /** False: journal batches do not wait for the WAL flush (see `PostgresStoreOptions.synchronousCommit`). */
  synchronousCommit?: boolean
  /**
   * How long a named run_code program's instance holds the program without renewing its lease
   * (ms, default 15000): once it expired, another instance takes the program over.
   */
  programLeaseMs?: number
}

const URL_PATTERN = /^postgres(ql)?:\/\/\S+$/

/** Check the `store` value; issues are path-qualified and collected, not thrown. */
export function checkStoreConfig(value: unknown, issues: string[]): StoreConfig | undefined {
  if (typeof value === 'string') {
    if (URL_PATTERN.test(value)) return { url: value }
    issues.push(
      'store: expected a postgres:// URL or { url, retentionDays?, poolSize?, synchronousCommit?, programLeaseMs? }',
    )
    return undefined
  }
  if (!isRecord(value)) {
    issues.push(
      'store: expected a postgres:// URL or { url, retentionDays?, poolSize?, synchronousCommit?, programLeaseMs? }',
    )
    return undefined
  }
  for (const key of Object.keys(value))
    if (!['url', 'retentionDays', 'poolSize', 'synchronousCommit', 'programLeaseMs'].includes(key))
      issues.push(
        `store.${key}: unknown key (expected url, retentionDays, poolSize, synchronousCommit, programLeaseMs)`,
      )
  const config: StoreConfig = { url: '' }
  if (typeof value.url === 'string' && URL_PATTERN.test(value.url)) config.url = value.url
  else issues.push('store.url: expected a postgres:// URL')
  if (value.retentionDays !== undefined) {
    if (typeof value.retentionDays === 'number' && value.retentionDays > 0 && Number.isFinite(value.retentionDays))
      config.retentionDays = value.retentionDays
    else issues.push('store.retentionDays: expected a positive number of days')
  }
  if (value.poolSize !== undefined) {
    if (Number.isSafeInteger(value.poolSize) && (value.poolSize as number) > 0)
      config.poolSize = value.poolSize as number
    else issues.push('store.poolSize: expected a positive integer')
  }
  if (value.synchronousCommit !== undefined) {
    if (typeof value.synchronousCommit === 'boolean') config.synchronousCommit = value.synchronousCommit
    else issues.push('store.synchronousCommit: expected true or false')
  }
  if (value.programLeaseMs !== undefined) {
    if (Number.isSafeInteger(value.programLeaseMs) && (value.programLeaseMs as number) >= 100)
      config.programLeaseMs = value.programLeaseMs as number
    else issues.push('store.programLeaseMs: expected an integer number of milliseconds, at least 100')
  }
  return config
}

/** A `--store` flag's value, checked like the config's. */
export function storeFlag(value: string): StoreConfig | string {
  const issues: string[] = []
  const config = checkStoreConfig(value, issues)
  if (config !== undefined) return config
  // What was typed may hold a password (in the userinfo or the query): shown only redacted.
  return URL.canParse(value)
    ? `--store: expected a postgres:// URL, got "${redactStoreUrl(value)}"`
    : '--store: expected a postgres:// URL (postgres://user:password@host:port/database)'
}

/** Open the configured store (PostgreSQL; `pg` loads here). */
export async function openConfiguredStore(config: StoreConfig, migrate = true) {
  const { createPostgresStore } = await import('../store/postgres.js')
  return createPostgresStore({
    connectionString: config.url,
    migrate,
    ...(config.retentionDays !== undefined ? { retentionDays: config.retentionDays } : {}),
    ...(config.poolSize !== undefined ? { poolSize: config.poolSize } : {}),
    ...(config.synchronousCommit !== undefined ? { synchronousCommit: config.synchronousCommit } : {}),
  })
}
