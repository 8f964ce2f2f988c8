// The embedded store: the journal file and the files beside it, as before, with no server. It is
// correct among processes of one machine (exclusive file creation decides claims and decisions);
// rate-limit buckets and sessions live in the process.
import { createHash, randomUUID } from 'node:crypto'
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import type { ApprovalOutcome } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import { ConfigError } from '../errors/config-error.js'
import { previewJson } from '../scheduling/preview.js'
import { type ClaimedCall, claimCall, claimsDirectory } from './claims.js'
import { readJournal } from './read-journal.js'
import type { JournalRecord } from './records.js'
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
} from './store.js'

/** Options of {@link createFileStore}. */
export interface FileStoreOptions {
  /** The journal file; turns, decisions and claims live in folders beside it. */
  readonly journal: string
  /** Flush every append to stable storage. Default false. */
  readonly fsync?: boolean
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex')

/** The embedded store over `journal` and the files beside it. */
export function createFileStore(options: FileStoreOptions): Store {
  if (options === null || typeof options !== 'object' || typeof options.journal !== 'string' || options.journal === '')
    throw new ConfigError('createFileStore(options).journal', 'expected the journal file path')
  return new FileStore(options.journal, options.fsync === true)
}

class FileStore implements Store {
  readonly kind = 'file' as const
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  private readonly sessions = new Map<string, StoredSession>()
  /** Spent one-time tokens → until when they are remembered (like the sessions, this process's own). */
  private readonly spent = new Map<string, number>()

  constructor(
    readonly journal: string,
    private readonly fsync: boolean,
  ) {}

  private get turns(): string {
    return `${this.journal}.turns`
  }

  async append(records: readonly JournalRecord[]): Promise<void> {
    if (records.length === 0) return
    const text = records.map((record) => `${serialize(record)}\n`).join('')
    const fd = openSync(this.journal, 'a')
    try {
      const bytes = Buffer.from(text, 'utf8')
      let offset = 0
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset)
      if (this.fsync) fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  }

  async *read(options: StoreReadOptions = {}): AsyncGenerator<StoredJournalRecord> {
    if (!existsSync(this.journal) && options.follow !== true) return
    if (!existsSync(this.journal)) writeFileSync(this.journal, '', { flag: 'a' })
    let seq = 0
    const after = options.after ?? 0
    for await (const record of readJournal(this.journal, { follow: options.follow, signal: options.signal })) {
      seq++
      if (seq > after) yield { seq, record }
    }
  }

  private turnFile(id: string): string {
    return `${this.turns}/${digest(id)}.json`
  }

  private decisionsDir(id: string): string {
    return `${this.turns}/${digest(id)}.decisions`
  }

  async saveTurn(id: string, state: JsonValue): Promise<void> {
    checkTurnId(id, 'saveTurn')
    mkdirSync(this.turns, { recursive: true })
    writeAtomic(this.turnFile(id), JSON.stringify({ id, state, closed: false }))
  }

  async createTurn(id: string, state: JsonValue, lease?: TurnLease): Promise<boolean> {
    checkTurnId(id, 'createTurn')
    checkLease(lease, 'createTurn')
    mkdirSync(this.turns, { recursive: true })
    // A link fails when its name exists: the file system picks one creator, and the turn file
    // appears whole (written and flushed under a temporary name first).
    if (!linkWhole(this.turnFile(id), JSON.stringify({ id, state, closed: false }))) return false
    if (lease !== undefined) this.writeLease(id, 1, lease)
    return true
  }

  private leaseDir(id: string): string {
    return `${this.turns}/${digest(id)}.lease`
  }

  /**
   * Write generation `generation` of the turn's lease: true when this call made it. Every take and
   * renewal makes the next generation, and a link makes each one once, so of a renewal and takers
   * racing for one expired lease exactly one wins.
   */
  private writeLease(id: string, generation: number, lease: TurnLease, then?: () => void): boolean {
    const dir = this.leaseDir(id)
    mkdirSync(dir, { recursive: true })
    const won = linkWhole(
      `${dir}/g${generation}`,
      JSON.stringify({ holder: lease.holder, until: Date.now() + lease.ms }),
    )
    if (!won) return false
    // Older generations are removed below, so a generation number can be linked again by a writer
    // that read the lease long ago: such a link is stale whenever a newer generation exists.
    const newer = readdirSync(dir).some((name) => generationOf(name) > generation)
    if (newer) {
      rmSync(`${dir}/g${generation}`, { force: true })
      return false
    }
    then?.()
    for (const name of readdirSync(dir)) {
      const older = generationOf(name)
      if (older > 0 && older < generation) rmSync(`${dir}/${name}`, { force: true })
    }
    return true
  }

  /** The turn's newest lease generation, or undefined when it has none. */
  private readLease(id: string): { generation: number; holder: string; until: number } | undefined {
    // A generation removed as it was read was replaced by a newer one: read that (bounded, as a
    // lease changes hands only so often).
    for (let attempt = 0; attempt < 100; attempt++) {
      let names: string[]
      try {
        names = readdirSync(this.leaseDir(id))
      } catch {
        return undefined
      }
      const generation = Math.max(0, ...names.map(generationOf))
      if (generation === 0) return undefined
      try {
        const { holder, until } = JSON.parse(readFileSync(`${this.leaseDir(id)}/g${generation}`, 'utf8'))
        return { generation, holder, until }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined
      }
    }
    return undefined
  }

  async leaseTurn(id: string, lease: TurnLease): Promise<boolean> {
    checkTurnId(id, 'leaseTurn')
    checkLease(lease ?? null, 'leaseTurn')
    const turn = this.readTurnFile(id)
    if (turn === undefined || turn.closed) return false
    const current = this.readLease(id)
    if (current === undefined || (current.holder !== lease.holder && current.until >= Date.now())) return false
    return this.writeLease(id, current.generation + 1, lease)
  }

  async saveLeasedTurn(id: string, state: JsonValue, lease: TurnLease, options?: LeasedSaveOptions): Promise<boolean> {
    checkTurnId(id, 'saveLeasedTurn')
    checkLease(lease ?? null, 'saveLeasedTurn')
    const file = this.turnFile(id)
    // Written and flushed under a temporary name first: only the rename comes after the fence.
    const temp = `${file}.${randomUUID()}.tmp`
    writeDurable(temp, JSON.stringify({ id, state, closed: options?.close === true }))
    try {
      for (;;) {
        const turn = this.readTurnFile(id)
        const current = this.readLease(id)
        if (turn === undefined || turn.closed || current === undefined || current.holder !== lease.holder) return false
        // The fence: the lease's next generation, which a link makes once, renewed to this holder,
        // then the rename, with nothing asynchronous between them. A taker can make the generation
        // after only once this one expired. When another made the next generation first, it is
        // read again: a taker's refuses this save, the holder's own (another write of it) does not.
        if (this.writeLease(id, current.generation + 1, lease, () => renameSync(temp, file))) return true
      }
    } finally {
      rmSync(temp, { force: true })
    }
  }

  private readTurnFile(id: string): { id: string; state: JsonValue; closed: boolean } | undefined {
    try {
      return JSON.parse(readFileSync(this.turnFile(id), 'utf8'))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }

  async loadTurn(id: string): Promise<StoredTurn | undefined> {
    const turn = this.readTurnFile(id)
    if (turn === undefined) return undefined
    const decisions: Record<string, ApprovalOutcome> = {}
    let names: string[] = []
    try {
      names = readdirSync(this.decisionsDir(id))
    } catch {
      // No decision yet.
    }
    for (const name of names) {
      try {
        const entry = JSON.parse(readFileSync(`${this.decisionsDir(id)}/${name}`, 'utf8'))
        decisions[entry.callId] = entry.outcome
      } catch {
        // Being written: its writer still holds the decision.
      }
    }
    return { id, state: turn.state, decisions, closed: turn.closed }
  }

  async closeTurn(id: string): Promise<void> {
    const turn = this.readTurnFile(id)
    if (turn === undefined || turn.closed) return
    writeAtomic(this.turnFile(id), JSON.stringify({ ...turn, closed: true }))
  }

  async pendingCalls(): Promise<PendingCall[]> {
    let names: string[] = []
    try {
      names = readdirSync(this.turns).filter((name) => name.endsWith('.json'))
    } catch {
      return []
    }
    const out: PendingCall[] = []
    for (const name of names) {
      try {
        const turn = JSON.parse(readFileSync(`${this.turns}/${name}`, 'utf8'))
        if (!turn.closed) out.push(...pendingCallsOf(turn.id, turn.state))
      } catch {
        // Being replaced; the next listing sees it.
      }
    }
    return out
  }

  async decide(turnId: string, callId: string, outcome: ApprovalOutcome): Promise<DecideResult> {
    const turn = this.readTurnFile(turnId)
    if (turn === undefined) return { applied: false, reason: `no turn "${turnId}" in the store` }
    if (turn.closed) return { applied: false, reason: `turn "${turnId}" is closed` }
    if (!pendingCallsOf(turnId, turn.state).some((call) => call.callId === callId))
      return { applied: false, reason: `call "${callId}" is not pending in turn "${turnId}"` }
    mkdirSync(this.decisionsDir(turnId), { recursive: true })
    const path = `${this.decisionsDir(turnId)}/${digest(callId)}.json`
    let fd: number
    try {
      fd = openSync(path, 'wx', 0o644)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const existing = (await this.loadTurn(turnId))?.decisions[callId]
      return {
        applied: false,
        reason: `call "${callId}" was already decided`,
        ...(existing ? { existing } : {}),
      }
    }
    try {
      writeSync(fd, JSON.stringify({ callId, outcome, ts: Date.now() }))
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    return { applied: true }
  }

  async claim(call: ClaimedCall, decision?: ClaimDecision): Promise<StoreClaim> {
    if (decision !== undefined) {
      const turn = await this.loadTurn(decision.turnId)
      const recorded = turn?.decisions[call.callId]
      if (turn === undefined || turn.closed || recorded?.kind !== decision.kind)
        return {
          won: false,
          holder: undefined,
          reason: `the decision for call "${call.callId}" is not recorded as "${decision.kind}" in an open turn "${decision.turnId}"`,
        }
    }
    const claim = claimCall(this.journal, call)
    if (claim.won) return { won: true, release: async () => claim.release() }
    return { won: false, holder: claim.holder, reason: `claimed in ${claimsDirectory(this.journal)}` }
  }

  private get standingFile(): string {
    return `${this.journal}.standing.json`
  }

  private readStanding(): StandingApproval[] {
    try {
      return JSON.parse(readFileSync(this.standingFile, 'utf8'))
    } catch {
      return []
    }
  }

  async standingApprovals(agentId?: string | null): Promise<StandingApproval[]> {
    const all = this.readStanding()
    return agentId === undefined ? all : all.filter((rule) => rule.agentId === agentId)
  }

  async setStandingApproval(rule: StandingApproval): Promise<void> {
    const rest = this.readStanding().filter((r) => r.agentId !== rule.agentId || r.toolName !== rule.toolName)
    writeAtomic(this.standingFile, JSON.stringify([...rest, rule]))
  }

  async revokeStandingApproval(toolName: string, agentId: string | null): Promise<boolean> {
    const all = this.readStanding()
    const rest = all.filter((r) => r.agentId !== agentId || r.toolName !== toolName)
    if (rest.length === all.length) return false
    writeAtomic(this.standingFile, JSON.stringify(rest))
    return true
  }

  async take(key: string, limit: BucketLimit, cost = 1): Promise<BucketTake> {
    const now = Date.now()
    const bucket = this.buckets.get(key) ?? { tokens: limit.capacity, at: now }
    const { state, take } = takeFromBucket(bucket.tokens, bucket.at, now, limit, cost)
    this.buckets.set(key, state)
    return take
  }

  async dropBuckets(prefix: string, idleMs: number, max: number): Promise<number> {
    const before = Date.now() - idleMs
    let dropped = 0
    for (const [key, bucket] of this.buckets) {
      if (dropped >= max) break
      if (key.startsWith(prefix) && bucket.at < before && this.buckets.delete(key)) dropped++
    }
    return dropped
  }

  async putSession(session: StoredSession): Promise<void> {
    this.sessions.set(session.id, session)
  }

  async getSession(id: string): Promise<StoredSession | undefined> {
    return this.sessions.get(id)
  }

  async deleteSession(id: string): Promise<void> {
    this.sessions.delete(id)
  }

  async spendOnce(token: string, expiresAt: number): Promise<boolean> {
    const now = Date.now()
    for (const [old, until] of this.spent) if (until < now) this.spent.delete(old)
    if (this.spent.has(token)) return false
    this.spent.set(token, expiresAt)
    return true
  }

  async status(): Promise<StoreStatus> {
    let journalRecords = 0
    const balance = new Map<string, number>()
    for await (const { record } of this.read()) {
      journalRecords++
      const key = JSON.stringify([record.callId, record.agentId, record.toolName])
      if (record.type === 'call-started') balance.set(key, (balance.get(key) ?? 0) + 1)
      else if (record.type === 'result') balance.set(key, (balance.get(key) ?? 0) - 1)
    }
    let claims = 0
    try {
      claims = readdirSync(claimsDirectory(this.journal)).length
    } catch {
      // No claim yet.
    }
    const openTurns = new Set((await this.pendingCalls()).map((call) => call.turnId)).size
    return {
      kind: 'file',
      where: this.journal,
      schemaVersion: 1,
      codeSchemaVersion: 1,
      journalRecords,
      openTurns,
      claims,
      unfinishedCalls: [...balance.values()].filter((n) => n > 0).length,
    }
  }

  async close(): Promise<void> {}
}

function checkTurnId(id: unknown, method: string): void {
  if (typeof id !== 'string' || id === '') throw new ConfigError(`store.${method}(id)`, 'expected a non-empty string')
}

function checkLease(lease: unknown, method: string): void {
  if (lease === undefined) return
  const issue = turnLeaseIssue(lease)
  if (issue !== undefined) throw new ConfigError(`store.${method}(lease)`, issue)
}

/** Make `path` with `text`, whole, only when it does not exist: true when this call made it. */
function linkWhole(path: string, text: string): boolean {
  const temp = `${path}.${randomUUID()}.tmp`
  writeDurable(temp, text)
  try {
    linkSync(temp, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    unlinkSync(temp)
  }
}

function writeDurable(path: string, text: string): void {
  const fd = openSync(path, 'w', 0o644)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function writeAtomic(path: string, text: string): void {
  const temp = `${path}.${randomUUID()}.tmp`
  writeDurable(temp, text)
  renameSync(temp, path)
}

/** `JSON.stringify`, or an iterative serializer for values nested too deeply for it. */
export function serialize(record: object): string {
  try {
    return JSON.stringify(record)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    return previewJson(record, Number.POSITIVE_INFINITY)
  }
}

/** The generation a lease file's name holds (`g<N>`), or 0 for any other name. */
function generationOf(name: string): number {
  return Number(/^g(\d+)$/.exec(name)?.[1] ?? 0)
}
