// The PostgreSQL store: every instance that opens the same database shares the journal, turns,
// decisions, claims, standing approvals, buckets and sessions. Each guarantee is the database's:
// a unique row decides a claim, a conditional insert under a row lock decides a decision, and
// LISTEN/NOTIFY wakes followers, who read from their cursor.
import { hostname } from 'node:os'
import type { Client, Notification, Pool, PoolClient } from 'pg'
import type { ApprovalOutcome } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import { ConfigError } from '../errors/config-error.js'
import { type CallClaimRecord, type ClaimedCall, claimDigest } from '../journal/claims.js'
import { serialize } from '../journal/file-store.js'
import { parseJournalRecord } from '../journal/parse-record.js'
import type { JournalRecord } from '../journal/records.js'
import {
  type BucketLimit,
  type BucketTake,
  type ClaimDecision,
  type DecideResult,
  type LeasedSaveOptions,
  type PendingCall,
  pendingCallsOf,
  type StandingApproval,
  type Store,
  type StoreClaim,
  type StoredJournalRecord,
  type StoredSession,
  type StoredTurn,
  type StoreReadOptions,
  type StoreStatus,
  type TurnLease,
  takeFromBucket,
  turnLeaseIssue,
} from '../journal/store.js'
import { StoreError } from '../journal/store-error.js'
import { checkSchema, migrate, SCHEMA_VERSION } from './migrations.js'
import { redactStoreUrl as redact, scrubStoreUrl } from './redact-url.js'

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (libpq URL; `?host=/socket/dir` for a Unix socket). */
  readonly connectionString: string
  /** Apply due migrations at start (under an advisory lock). Default true; false refuses an older schema. */
  readonly migrate?: boolean
  /** Delete journal records older than this many days (checked at start and hourly). Default: keep all. */
  readonly retentionDays?: number
  /** Most connections this instance opens for queries (one more is kept for LISTEN). Default 10. */
  readonly poolSize?: number
  /** Most records written in one transaction. Default 1000. */
  readonly maxBatch?: number
  /**
   * Wait for each journal batch's WAL flush on the server before acknowledging it. Default true: an
   * acknowledged record survives the database machine losing power. With false, PostgreSQL's
   * `synchronous_commit = off` for journal batches only: an acknowledged record survives any gateway
   * crash and a database restart, but a database crash can lose the last moments (about 3 ×
   * `wal_writer_delay`) of records; claims and decisions always wait for the flush.
   */
  readonly synchronousCommit?: boolean
  /**
   * How long a journal append waits for a database that cannot be reached (stopped, restarting,
   * network down) before it fails: its batch is written again as soon as the database is back.
   * Default 10000 ms. A `serve` response waits for its records, so this bounds that wait too.
   */
  readonly appendWaitMs?: number
}

const DEFAULT_APPEND_WAIT_MS = 10_000

const READ_PAGE = 1000
/** How long past its expiry a spent token is still remembered (seconds): room for clock skew. */
const SPENT_GRACE_S = 3600
const INSTANCE = `${hostname()}:${process.pid}`

/**
 * Open the PostgreSQL store: connect, refuse a schema newer than this code, apply due migrations
 * (unless `migrate: false`), and start the journal retention. `pg` is loaded here, not before.
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const where = 'createPostgresStore(options)'
  if (options === null || typeof options !== 'object') throw new ConfigError(where, 'expected { connectionString }')
  const url = options.connectionString
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url))
    throw new ConfigError(`${where}.connectionString`, 'expected a postgres:// or postgresql:// URL')
  const positive = (key: 'retentionDays' | 'poolSize' | 'maxBatch') => {
    const value = options[key]
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0))
      throw new ConfigError(`${where}.${key}`, 'expected a positive number')
  }
  positive('retentionDays')
  positive('poolSize')
  positive('maxBatch')
  const wait = options.appendWaitMs
  if (wait !== undefined && !(typeof wait === 'number' && Number.isFinite(wait) && wait >= 0))
    throw new ConfigError(`${where}.appendWaitMs`, 'expected a number of milliseconds (0 or more)')
  if (options.synchronousCommit !== undefined && typeof options.synchronousCommit !== 'boolean')
    throw new ConfigError(`${where}.synchronousCommit`, 'expected a boolean')
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({
    connectionString: url,
    max: Math.floor(options.poolSize ?? 10),
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  })
  const store = new PostgresStore(pg, pool, url, options)
  try {
    await store.start(options.migrate !== false)
  } catch (error) {
    await store.close()
    throw store.failure('open', error)
  }
  return store
}

type Pg = typeof import('pg').default

interface Waiter {
  resolve(): void
}

interface QueuedAppend {
  readonly rows: readonly JournalRecord[]
  /** When it was appended (ms since the epoch): it waits for an unreachable database until `appendWaitMs` after. */
  readonly queuedAt: number
  resolve(): void
  reject(error: unknown): void
}

class PostgresStore implements Store {
  readonly kind = 'postgres' as const
  private closed = false
  private queue: QueuedAppend[] = []
  private flushing: Promise<void> | undefined
  private listener: Client | undefined
  private writer: Client | undefined
  private listening: Promise<void> | undefined
  /** Notifications seen (and reconnections), so a reader knows whether it may have missed one. */
  private generation = 0
  private readonly waiters = new Set<Waiter>()
  /** Watchers of turns and decisions (toolgate_decisions), told on each notification and reconnection. */
  private readonly turnWatchers = new Set<() => void>()
  private retention: NodeJS.Timeout | undefined
  private readonly maxBatch: number
  private readonly appendWaitMs: number

  constructor(
    private readonly pg: Pg,
    private readonly pool: Pool,
    private readonly url: string,
    private readonly options: PostgresStoreOptions,
  ) {
    this.maxBatch = Math.floor(options.maxBatch ?? 1000)
    this.appendWaitMs = options.appendWaitMs ?? DEFAULT_APPEND_WAIT_MS
    // An idle connection the server drops (a restart) must not end the process; the pool replaces it.
    pool.on('error', () => {})
  }

  /** A failure as the caller sees it: what was attempted, where (without the password), and why. */
  failure(what: string, error: unknown): Error {
    if (error instanceof StoreError || error instanceof ConfigError) return error
    // A driver's message may quote the URL or one of its values: never a secret in a message.
    const message = scrubStoreUrl(error instanceof Error ? error.message : String(error), this.url)
    return new StoreError(
      'STORE_UNAVAILABLE',
      `PostgreSQL store ${redact(this.url)}: ${what} failed: ${message || (error as { code?: string })?.code || 'connection error'}`,
      { cause: error },
    )
  }

  private async run<T>(what: string, body: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreError('STORE_UNAVAILABLE', `PostgreSQL store ${redact(this.url)}: closed`)
    let client: PoolClient
    try {
      client = await this.pool.connect()
    } catch (error) {
      throw this.failure(what, error)
    }
    let broken: Error | undefined
    // A connection lost while checked out fails the query in hand; the event itself is not news.
    const onError = (error: Error) => {
      broken = error
    }
    client.on('error', onError)
    try {
      return await body(client)
    } catch (error) {
      if (isConnectionError(error)) broken = error as Error
      if (!(error instanceof StoreError)) {
        await client.query('ROLLBACK').catch(() => {})
      }
      throw this.failure(what, error)
    } finally {
      client.off('error', onError)
      client.release(broken)
    }
  }

  private async tx<T>(what: string, body: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.run(what, async (client) => {
      await client.query('BEGIN')
      const result = await body(client)
      await client.query('COMMIT')
      return result
    })
  }

  async start(migrateNow: boolean): Promise<void> {
    await this.run('start', async (client) => {
      if (migrateNow) await migrate(client)
      else {
        const { version, due } = await checkSchema(client)
        if (due > 0)
          throw new StoreError(
            'STORE_SCHEMA',
            `the PostgreSQL store has schema version ${version}, this toolgate needs ${SCHEMA_VERSION}: run "toolgate store migrate"`,
          )
      }
    })
    if (this.options.retentionDays !== undefined) {
      await this.prune()
      this.retention = setInterval(() => void this.prune().catch(() => {}), 3_600_000)
      this.retention.unref()
    }
  }

  /** Delete journal records past the retention, in slices so no one transaction grows large. */
  async prune(): Promise<number> {
    const days = this.options.retentionDays
    if (days === undefined) return 0
    let total = 0
    for (;;) {
      const deleted = await this.run('retention', (client) =>
        client.query(
          `DELETE FROM toolgate_journal WHERE seq IN (
             SELECT seq FROM toolgate_journal WHERE created_at < now() - make_interval(secs => $1) LIMIT 10000)`,
          [days * 86_400],
        ),
      )
      total += deleted.rowCount ?? 0
      if ((deleted.rowCount ?? 0) < 10_000) return total
    }
  }

  // --- journal ---

  append(records: readonly JournalRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.queue.push({ rows: records, queuedAt: Date.now(), resolve, reject })
      this.kick()
    })
  }

  private kick(): void {
    if (this.flushing !== undefined) return
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined
      // Appended after the loop's last look and before this callback: written by a new loop.
      if (this.queue.length > 0) this.kick()
    })
  }

  /**
   * Group commit: whatever was appended while the previous batch was being written goes out as the
   * next batch, in one statement and one transaction (one WAL flush).
   */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch: QueuedAppend[] = []
      let rows = 0
      while (this.queue.length > 0 && (batch.length === 0 || rows + this.queue[0].rows.length <= this.maxBatch)) {
        const next = this.queue.shift() as QueuedAppend
        batch.push(next)
        rows += next.rows.length
      }
      await this.commit(batch)
    }
  }

  /**
   * Write `batch` and settle each append. One append's records never fail another's: one that
   * cannot be serialized is refused alone, and a batch the database refuses for its data is written
   * again append by append, so only the append at fault fails.
   */
  private async commit(batch: readonly QueuedAppend[]): Promise<void> {
    const ready: { entry: QueuedAppend; rows: Row[] }[] = []
    for (const entry of batch) {
      try {
        ready.push({ entry, rows: entry.rows.map(rowOf) })
      } catch (error) {
        entry.reject(this.failure('journal append', error))
      }
    }
    if (ready.length === 0) return
    const columns: [string[], string[], (string | null)[], string[], string[]] = [[], [], [], [], []]
    for (const { rows } of ready)
      for (const row of rows) for (let i = 0; i < row.length; i++) (columns[i] as (string | null)[]).push(row[i])
    for (let attempt = 0; ; attempt++) {
      try {
        await this.writeBatch(columns)
        for (const { entry } of ready) entry.resolve()
        return
      } catch (error) {
        if (!isConnectionError((error as { cause?: unknown }).cause ?? error)) {
          if (ready.length === 1) ready[0].entry.reject(error)
          else for (const { entry } of ready) await this.commit([entry])
          return
        }
        // The database is out of reach: the batch is written again once it is back, as long as its
        // oldest append may still wait (a response waits for its records, bounded).
        const waitUntil = Math.min(...ready.map(({ entry }) => entry.queuedAt)) + this.appendWaitMs
        const now = Date.now()
        if (this.closed || now >= waitUntil) {
          for (const { entry } of ready) entry.reject(error)
          return
        }
        await pause(Math.min(1000, 100 * 2 ** attempt, waitUntil - now), undefined)
      }
    }
  }

  /**
   * One connection of its own writes the batches (they are serialized anyway): no pool checkout per
   * batch, and the commit setting is made once per connection. A broken one is replaced next time.
   */
  private async writeBatch(columns: unknown[]): Promise<void> {
    if (this.closed) throw new StoreError('STORE_UNAVAILABLE', `PostgreSQL store ${redact(this.url)}: closed`)
    try {
      if (this.writer === undefined) {
        const client = new this.pg.Client({ connectionString: this.url, connectionTimeoutMillis: 10_000 })
        client.on('error', () => {
          if (this.writer === client) this.writer = undefined
        })
        this.writer = client
        await client.connect()
        if (this.options.synchronousCommit === false) await client.query('SET synchronous_commit = off')
      }
      await this.writer.query('SELECT toolgate_append($1, $2, $3, $4, $5)', columns)
    } catch (error) {
      const broken = this.writer
      this.writer = undefined
      await broken?.end().catch(() => {})
      throw this.failure('journal append', error)
    }
  }

  async *read(options: StoreReadOptions = {}): AsyncGenerator<StoredJournalRecord> {
    let cursor = options.after ?? 0
    const { follow = false, signal } = options
    for (;;) {
      if (signal?.aborted) return
      if (follow) {
        try {
          await this.listen()
        } catch {
          // The database is unreachable: try again shortly (only while it is down).
          await pause(500, signal)
          continue
        }
      }
      const seen = this.generation
      let rows: { seq: string; record: string }[]
      try {
        rows = (
          await this.run('journal read', (client) =>
            client.query<{ seq: string; record: string }>(
              'SELECT seq, record FROM toolgate_journal WHERE seq > $1 ORDER BY seq LIMIT $2',
              [cursor, READ_PAGE],
            ),
          )
        ).rows
      } catch (error) {
        // A follower outlives an outage: it waits for the listener to reconnect and reads on.
        if (!follow) throw error
        await pause(500, signal)
        continue
      }
      for (const row of rows) {
        cursor = Number(row.seq)
        const record = parseJournalRecord(row.record, () => {})
        if (record !== undefined) yield { seq: cursor, record }
      }
      if (rows.length === READ_PAGE) continue
      if (!follow) return
      if (this.generation === seen) await this.wake(signal)
    }
  }

  /** Until a notification (or reconnection) arrives, or `signal` aborts. */
  private wake(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve: () => {
          this.waiters.delete(waiter)
          signal?.removeEventListener('abort', waiter.resolve)
          resolve()
        },
      }
      this.waiters.add(waiter)
      signal?.addEventListener('abort', waiter.resolve, { once: true })
      if (signal?.aborted || this.closed) waiter.resolve()
    })
  }

  private notifyAll(): void {
    this.generation++
    for (const waiter of [...this.waiters]) waiter.resolve()
  }

  private tellTurnWatchers(): void {
    for (const watcher of [...this.turnWatchers]) {
      try {
        watcher()
      } catch {
        // A watcher's failure is its own; the others are still told.
      }
    }
  }

  watchTurns(onChange: () => void): () => void {
    this.turnWatchers.add(onChange)
    // The LISTEN connection; while it cannot be opened, the watcher's own polling covers.
    this.listen().then(
      () => onChange(),
      () => {},
    )
    return () => {
      this.turnWatchers.delete(onChange)
    }
  }

  /** The one LISTEN connection, reconnected after a failure (readers re-read when it is back). */
  private listen(): Promise<void> {
    if (this.listening !== undefined) return this.listening
    const attempt = async (): Promise<void> => {
      const client = new this.pg.Client({ connectionString: this.url })
      client.on('error', () => {})
      client.on('notification', (message: Notification) => {
        this.notifyAll()
        if (message.channel === 'toolgate_decisions') this.tellTurnWatchers()
      })
      client.on('end', () => {
        if (this.listener !== client || this.closed) return
        this.listener = undefined
        this.listening = undefined
        this.generation++
        // Reconnect in the background; until then followers wait (and re-read once it is back).
        const retry = () => {
          if (this.closed) return
          this.listen().then(
            () => {
              this.notifyAll()
              this.tellTurnWatchers()
            },
            () => setTimeout(retry, 1000).unref(),
          )
        }
        setTimeout(retry, 250).unref()
      })
      await client.connect()
      await client.query('LISTEN toolgate_journal')
      await client.query('LISTEN toolgate_decisions')
      this.listener = client
    }
    this.listening = attempt().catch((error) => {
      this.listening = undefined
      throw this.failure('listen', error)
    })
    return this.listening
  }

  // --- turns and decisions ---

  async saveTurn(id: string, state: JsonValue): Promise<void> {
    checkId(id, 'saveTurn')
    const text = serialize(state as object)
    const pending = pendingCallsOf(id, state)
    await this.tx('save turn', async (client) => {
      await client.query(
        `INSERT INTO toolgate_turns (id, state) VALUES ($1, $2)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state, closed = false, updated_at = now()`,
        [id, text],
      )
      await client.query('DELETE FROM toolgate_turn_calls WHERE turn_id = $1', [id])
      await listPendingCalls(client, id, pending)
    })
  }

  async createTurn(id: string, state: JsonValue, lease?: TurnLease): Promise<boolean> {
    checkId(id, 'createTurn')
    if (lease !== undefined) checkLease(lease, 'createTurn')
    const text = serialize(state as object)
    const pending = pendingCallsOf(id, state)
    return this.tx('create turn', async (client) => {
      // The primary key decides: of instances creating one id together, exactly one inserts it.
      const inserted = await client.query(
        `INSERT INTO toolgate_turns (id, state, lease_holder, lease_until)
         VALUES ($1, $2, $3, CASE WHEN $3::text IS NULL THEN NULL ELSE now() + $4::double precision * interval '1 millisecond' END)
         ON CONFLICT (id) DO NOTHING`,
        [id, text, lease?.holder ?? null, lease?.ms ?? 0],
      )
      if (inserted.rowCount !== 1) return false
      await listPendingCalls(client, id, pending)
      return true
    })
  }

  async leaseTurn(id: string, lease: TurnLease): Promise<boolean> {
    checkId(id, 'leaseTurn')
    checkLease(lease, 'leaseTurn')
    // One row update decides: a taker that comes second re-reads the row the first one wrote, whose
    // lease is the first one's and has not expired, and updates nothing.
    const updated = await this.run('lease turn', (client) =>
      client.query(
        `UPDATE toolgate_turns SET lease_holder = $2, lease_until = now() + $3::double precision * interval '1 millisecond'
         WHERE id = $1 AND NOT closed AND lease_holder IS NOT NULL AND (lease_holder = $2 OR lease_until < now())`,
        [id, lease.holder, lease.ms],
      ),
    )
    return updated.rowCount === 1
  }

  async saveLeasedTurn(id: string, state: JsonValue, lease: TurnLease, options?: LeasedSaveOptions): Promise<boolean> {
    checkId(id, 'saveLeasedTurn')
    checkLease(lease, 'saveLeasedTurn')
    const text = serialize(state as object)
    const pending = pendingCallsOf(id, state)
    return this.tx('save leased turn', async (client) => {
      // One row update checks the holder and writes: a taker's update of the row (which changes the
      // holder) comes wholly before it, and this one then updates nothing, or wholly after it, and
      // then finds a lease renewed in this very update.
      const updated = await client.query(
        `UPDATE toolgate_turns SET state = $2, closed = $5, updated_at = now(),
           lease_until = now() + $4::double precision * interval '1 millisecond'
         WHERE id = $1 AND NOT closed AND lease_holder = $3`,
        [id, text, lease.holder, lease.ms, options?.close === true],
      )
      if (updated.rowCount !== 1) return false
      await client.query('DELETE FROM toolgate_turn_calls WHERE turn_id = $1', [id])
      await listPendingCalls(client, id, pending)
      return true
    })
  }

  async loadTurn(id: string): Promise<StoredTurn | undefined> {
    return this.run('load turn', async (client) => {
      const turn = await client.query<{ state: string; closed: boolean }>(
        'SELECT state, closed FROM toolgate_turns WHERE id = $1',
        [id],
      )
      if (turn.rows.length === 0) return undefined
      const decided = await client.query<{ call_id: string; outcome: ApprovalOutcome }>(
        'SELECT call_id, outcome FROM toolgate_decisions WHERE turn_id = $1',
        [id],
      )
      const decisions: Record<string, ApprovalOutcome> = {}
      for (const row of decided.rows) decisions[row.call_id] = row.outcome
      return { id, state: JSON.parse(turn.rows[0].state) as JsonValue, decisions, closed: turn.rows[0].closed }
    })
  }

  async closeTurn(id: string): Promise<void> {
    await this.run('close turn', async (client) => {
      await client.query('UPDATE toolgate_turns SET closed = true, updated_at = now() WHERE id = $1', [id])
      await client.query("SELECT pg_notify('toolgate_decisions', $1)", [id])
    })
  }

  async pendingCalls(): Promise<PendingCall[]> {
    const result = await this.run('list pending calls', (client) =>
      client.query<{ turn_id: string; call_id: string; tool_name: string; agent_id: string | null }>(
        `SELECT c.turn_id, c.call_id, c.tool_name, c.agent_id FROM toolgate_turn_calls c
         JOIN toolgate_turns t ON t.id = c.turn_id WHERE NOT t.closed ORDER BY t.updated_at, c.turn_id, c.call_id`,
      ),
    )
    return result.rows.map((row) => ({
      turnId: row.turn_id,
      callId: row.call_id,
      toolName: row.tool_name,
      agentId: row.agent_id,
    }))
  }

  async decide(turnId: string, callId: string, outcome: ApprovalOutcome): Promise<DecideResult> {
    return this.tx('decide', async (client) => {
      // The turn row is share-locked: it cannot be closed or replaced while the decision goes in.
      const turn = await client.query<{ closed: boolean }>(
        'SELECT closed FROM toolgate_turns WHERE id = $1 FOR SHARE',
        [turnId],
      )
      if (turn.rows.length === 0) return { applied: false, reason: `no turn "${turnId}" in the store` }
      if (turn.rows[0].closed) return { applied: false, reason: `turn "${turnId}" is closed` }
      const inserted = await client.query(
        `INSERT INTO toolgate_decisions (turn_id, call_id, outcome)
         SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM toolgate_turn_calls WHERE turn_id = $1 AND call_id = $2)
         ON CONFLICT (turn_id, call_id) DO NOTHING RETURNING call_id`,
        [turnId, callId, JSON.stringify(outcome)],
      )
      if (inserted.rows.length === 1) {
        await client.query("SELECT pg_notify('toolgate_decisions', $1)", [turnId])
        return { applied: true }
      }
      const existing = await client.query<{ outcome: ApprovalOutcome }>(
        'SELECT outcome FROM toolgate_decisions WHERE turn_id = $1 AND call_id = $2',
        [turnId, callId],
      )
      if (existing.rows.length === 0)
        return { applied: false, reason: `call "${callId}" is not pending in turn "${turnId}"` }
      return { applied: false, reason: `call "${callId}" was already decided`, existing: existing.rows[0].outcome }
    })
  }

  async claim(call: ClaimedCall, decision?: ClaimDecision): Promise<StoreClaim> {
    const key = claimDigest(call)
    const won = await this.tx('claim', async (client) => {
      if (decision !== undefined) {
        // Checked in the transaction that inserts the claim, with the turn row share-locked.
        const recorded = await client.query<{ kind: string }>(
          `SELECT d.outcome->>'kind' AS kind FROM toolgate_decisions d JOIN toolgate_turns t ON t.id = d.turn_id
           WHERE d.turn_id = $1 AND d.call_id = $2 AND NOT t.closed FOR SHARE OF t`,
          [decision.turnId, call.callId],
        )
        if (recorded.rows[0]?.kind !== decision.kind)
          return `the decision for call "${call.callId}" is not recorded as "${decision.kind}" in an open turn "${decision.turnId}"`
      }
      const inserted = await client.query(
        `INSERT INTO toolgate_claims (claim_key, call_id, agent_id, tool_name, instance, pid)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (claim_key) DO NOTHING RETURNING claim_key`,
        [key, call.callId, call.agentId, call.toolName, INSTANCE, process.pid],
      )
      return inserted.rows.length === 1
    })
    if (won === true)
      return {
        won: true,
        release: async () => {
          await this.run('release claim', (client) =>
            client.query('DELETE FROM toolgate_claims WHERE claim_key = $1', [key]),
          )
        },
      }
    if (typeof won === 'string') return { won: false, holder: undefined, reason: won }
    const holder = await this.run('read claim', (client) =>
      client.query<{ instance: string; pid: number; claimed_at: Date }>(
        'SELECT instance, pid, claimed_at FROM toolgate_claims WHERE claim_key = $1',
        [key],
      ),
    )
    const row = holder.rows[0]
    const record: CallClaimRecord | undefined =
      row === undefined
        ? undefined
        : {
            v: 1,
            type: 'call-claimed',
            ts: row.claimed_at.getTime(),
            pid: row.pid,
            callId: call.callId,
            agentId: call.agentId,
            toolName: call.toolName,
          }
    return { won: false, holder: record, reason: row ? `claimed by ${row.instance}` : 'claimed by another resume' }
  }

  // --- standing approvals ---

  async standingApprovals(agentId?: string | null): Promise<StandingApproval[]> {
    const result = await this.run('list standing approvals', (client) =>
      agentId === undefined
        ? client.query<{ agent_id: string | null; tool_name: string; kind: StandingApproval['kind'] }>(
            'SELECT agent_id, tool_name, kind FROM toolgate_standing ORDER BY created_at',
          )
        : client.query<{ agent_id: string | null; tool_name: string; kind: StandingApproval['kind'] }>(
            'SELECT agent_id, tool_name, kind FROM toolgate_standing WHERE scope = $1 ORDER BY created_at',
            [scopeOf(agentId)],
          ),
    )
    return result.rows.map((row) => ({ agentId: row.agent_id, toolName: row.tool_name, kind: row.kind }))
  }

  async setStandingApproval(rule: StandingApproval): Promise<void> {
    await this.run('set standing approval', (client) =>
      client.query(
        `INSERT INTO toolgate_standing (scope, agent_id, tool_name, kind) VALUES ($1, $2, $3, $4)
         ON CONFLICT (scope, tool_name) DO UPDATE SET kind = excluded.kind`,
        [scopeOf(rule.agentId), rule.agentId, rule.toolName, rule.kind],
      ),
    )
  }

  async revokeStandingApproval(toolName: string, agentId: string | null): Promise<boolean> {
    const result = await this.run('revoke standing approval', (client) =>
      client.query('DELETE FROM toolgate_standing WHERE scope = $1 AND tool_name = $2', [scopeOf(agentId), toolName]),
    )
    return (result.rowCount ?? 0) > 0
  }

  // --- rate-limit buckets ---

  async take(key: string, limit: BucketLimit, cost = 1): Promise<BucketTake> {
    if (cost > limit.capacity)
      return { allowed: false, remaining: limit.capacity, retryAfterMs: Number.POSITIVE_INFINITY }
    return this.run('rate-limit take', async (client) => {
      // A bucket is not evidence: losing its last moments in a database crash only refunds a few
      // tokens, so its commit does not wait for the WAL flush.
      await client.query('BEGIN; SET LOCAL synchronous_commit = off')
      // One statement refills and takes under the row's lock, by the database's clock (instances
      // with skewed clocks agree); a row comes back only when the tokens were there.
      const taken = await client.query<{ tokens: number }>(
        `INSERT INTO toolgate_buckets AS b (key, tokens, at_ms)
         VALUES ($1, $2::float8 - $4::float8, extract(epoch from now()) * 1000)
         ON CONFLICT (key) DO UPDATE SET
           tokens = least($2::float8, b.tokens + greatest(0, extract(epoch from now()) * 1000 - b.at_ms) / 1000 * $3::float8) - $4::float8,
           at_ms = greatest(b.at_ms, extract(epoch from now()) * 1000)
         WHERE least($2::float8, b.tokens + greatest(0, extract(epoch from now()) * 1000 - b.at_ms) / 1000 * $3::float8) >= $4::float8
         RETURNING b.tokens`,
        [key, limit.capacity, limit.refillPerSecond, cost],
      )
      if (taken.rows.length === 1) {
        await client.query('COMMIT')
        return { allowed: true, remaining: Number(taken.rows[0].tokens), retryAfterMs: 0 }
      }
      const row = (
        await client.query<{ tokens: number; at_ms: number; now_ms: number }>(
          'SELECT tokens, at_ms, extract(epoch from now()) * 1000 AS now_ms FROM toolgate_buckets WHERE key = $1',
          [key],
        )
      ).rows[0]
      await client.query('COMMIT')
      return takeFromBucket(row.tokens, row.at_ms, Number(row.now_ms), limit, cost).take
    })
  }

  async dropBuckets(prefix: string, idleMs: number, max: number): Promise<number> {
    const result = await this.run('drop idle buckets', (client) =>
      client.query(
        `DELETE FROM toolgate_buckets WHERE key IN (
           SELECT key FROM toolgate_buckets
           WHERE starts_with(key, $1) AND at_ms < extract(epoch from now()) * 1000 - $2::float8
           LIMIT $3)`,
        [prefix, idleMs, max],
      ),
    )
    return result.rowCount ?? 0
  }

  // --- sessions ---

  async putSession(session: StoredSession): Promise<void> {
    await this.run('put session', (client) =>
      client.query(
        `INSERT INTO toolgate_sessions (id, instance, created_at) VALUES ($1, $2, to_timestamp($3 / 1000.0))
         ON CONFLICT (id) DO UPDATE SET instance = excluded.instance`,
        [session.id, session.instance, session.createdAt],
      ),
    )
  }

  async getSession(id: string): Promise<StoredSession | undefined> {
    const result = await this.run('get session', (client) =>
      client.query<{ instance: string; created_at: Date }>(
        'SELECT instance, created_at FROM toolgate_sessions WHERE id = $1',
        [id],
      ),
    )
    const row = result.rows[0]
    return row === undefined ? undefined : { id, instance: row.instance, createdAt: row.created_at.getTime() }
  }

  async deleteSession(id: string): Promise<void> {
    await this.run('delete session', (client) => client.query('DELETE FROM toolgate_sessions WHERE id = $1', [id]))
  }

  // --- one-time tokens ---

  async spendOnce(token: string, expiresAt: number): Promise<boolean> {
    checkId(token, 'spendOnce')
    if (!Number.isFinite(expiresAt)) throw new ConfigError('store.spendOnce(expiresAt)', 'expected ms since the epoch')
    return this.run('spend a one-time token', async (client) => {
      // Rows expired a while ago go first, a slice at a time; the grace keeps a token spent while an
      // instance whose clock lags the database's may still take its state as unexpired.
      await client.query(
        `DELETE FROM toolgate_spent WHERE token IN (
           SELECT token FROM toolgate_spent WHERE expires_at < now() - make_interval(secs => $1) LIMIT 100)`,
        [SPENT_GRACE_S],
      )
      // The primary key decides: of instances spending one token together, exactly one inserts it.
      const inserted = await client.query(
        `INSERT INTO toolgate_spent (token, expires_at) VALUES ($1, to_timestamp($2 / 1000.0))
         ON CONFLICT (token) DO NOTHING`,
        [token, expiresAt],
      )
      return inserted.rowCount === 1
    })
  }

  async status(): Promise<StoreStatus> {
    return this.run('status', async (client) => {
      const { version } = await checkSchema(client)
      const count = async (sql: string) => Number((await client.query<{ n: string }>(sql)).rows[0]?.n ?? 0)
      const has = version >= 1
      return {
        kind: 'postgres' as const,
        where: redact(this.url),
        schemaVersion: version,
        codeSchemaVersion: SCHEMA_VERSION,
        journalRecords: has ? await count('SELECT count(*) AS n FROM toolgate_journal') : 0,
        openTurns: has ? await count('SELECT count(*) AS n FROM toolgate_turns WHERE NOT closed') : 0,
        claims: has ? await count('SELECT count(*) AS n FROM toolgate_claims') : 0,
        unfinishedCalls: has
          ? await count(
              `SELECT count(*) AS n FROM (SELECT 1 FROM toolgate_journal WHERE type IN ('call-started', 'result')
               GROUP BY call_id, agent_id, tool_name
               HAVING count(*) FILTER (WHERE type = 'call-started') > count(*) FILTER (WHERE type = 'result')) unfinished`,
            )
          : 0,
      }
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    // Appends already made are written before the connections go.
    while (this.flushing !== undefined) await this.flushing
    this.closed = true
    if (this.retention !== undefined) clearInterval(this.retention)
    for (const waiter of [...this.waiters]) waiter.resolve()
    const listener = this.listener
    this.listener = undefined
    await listener?.end().catch(() => {})
    const writer = this.writer
    this.writer = undefined
    await writer?.end().catch(() => {})
    await this.pool.end().catch(() => {})
  }
}

/** One journal row: type, call id, agent id, tool name, and the record as JSON. */
type Row = [string, string, string | null, string, string]

/**
 * A record's row. The indexed columns cannot hold U+0000 (PostgreSQL's text refuses it), so a NUL
 * there is written as U+FFFD; the record itself keeps it, escaped in its JSON.
 */
function rowOf(record: JournalRecord): Row {
  return [
    noNul(record.type),
    noNul(record.callId),
    record.agentId === null ? null : noNul(record.agentId),
    noNul(record.toolName),
    serialize(record),
  ]
}

function noNul(text: string): string {
  return typeof text === 'string' && text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text
}

/** A timer that ends early when `signal` aborts (never rejects). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** Index turn `id`'s waiting calls (the viewer's pending list) and tell the listening instances it changed. */
async function listPendingCalls(client: PoolClient, id: string, pending: readonly PendingCall[]): Promise<void> {
  if (pending.length > 0)
    await client.query(
      `INSERT INTO toolgate_turn_calls (turn_id, call_id, tool_name, agent_id)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])`,
      [id, pending.map((c) => c.callId), pending.map((c) => c.toolName), pending.map((c) => c.agentId)],
    )
  await client.query("SELECT pg_notify('toolgate_decisions', $1)", [id])
}

function checkLease(lease: unknown, method: string): void {
  const issue = turnLeaseIssue(lease)
  if (issue !== undefined) throw new ConfigError(`store.${method}(lease)`, issue)
}

function checkId(id: unknown, method: string): void {
  if (typeof id !== 'string' || id === '') throw new ConfigError(`store.${method}(id)`, 'expected a non-empty string')
}

function scopeOf(agentId: string | null): string {
  return agentId === null ? 'global' : `agent:${agentId}`
}

/** A failure of the connection itself (as opposed to a statement): the client is not reused. */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P') || code.startsWith('E'))) return true
  const message = error instanceof Error ? error.message : ''
  return /terminat|ECONNRE|not queryable|Connection|timeout|starting up|shutting down|recovery mode/i.test(message)
}

/** Open one connection, apply due migrations, close (`toolgate store migrate`). */
export async function migrateStore(connectionString: string): Promise<{ from: number; to: number }> {
  return withClient(connectionString, 'migrate', (client) => migrate(client))
}

/** The schema version in the database and the newest this code knows, without changing anything. */
export async function storeSchemaStatus(connectionString: string): Promise<{ version: number; codeVersion: number }> {
  return withClient(connectionString, 'status', async (client) => {
    const { schemaVersion } = await import('./migrations.js')
    return { version: await schemaVersion(client), codeVersion: SCHEMA_VERSION }
  })
}

async function withClient<T>(url: string, what: string, body: (client: Client) => Promise<T>): Promise<T> {
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url))
    throw new ConfigError('connectionString', 'expected a postgres:// or postgresql:// URL')
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  client.on('error', () => {})
  try {
    await client.connect()
    return await body(client)
  } catch (error) {
    if (error instanceof StoreError) throw error
    throw new StoreError(
      'STORE_UNAVAILABLE',
      `PostgreSQL store ${redact(url)}: ${what} failed: ${scrubStoreUrl(error instanceof Error ? error.message : String(error), url)}`,
      { cause: error },
    )
  } finally {
    await client.end().catch(() => {})
  }
}
