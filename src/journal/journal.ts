import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs'
import type { Context } from 'cordis'
import type { CodeDispatchLog, CodeDispatchRecord } from '../code-mode/events.js'
import type {
  Agent,
  ApprovalAnswerSource,
  ToolExecution,
  ToolExecutionResult,
  ToolExecutionToken,
} from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { directListener } from '../runtime/index.js'
import { previewJson } from '../scheduling/preview.js'
import {
  JOURNAL_VERSION,
  type JournalCredential,
  type JournalIdentity,
  type JournalPolicyDecision,
  type JournalRecord,
  type JournalRecordBase,
} from './records.js'
import type { Store } from './store.js'
import { StoreError } from './store-error.js'

/** Config of {@link Journal}: a file (`path`), or a shared {@link Store} (`store`). */
export type JournalConfig = JournalFileConfig | JournalStoreConfig

/** A journal in a store: records are appended in batches; a call's body runs only once its records are acknowledged. */
export interface JournalStoreConfig {
  readonly store: Store
  readonly path?: undefined
  readonly fsync?: undefined
  /** As for a file journal: who a call's agent acts for, recorded with each of its records. */
  readonly identify?: (agent: Agent | undefined) => JournalIdentity | undefined
  /** The credential a call of an upstream tool carried, recorded with its result (never the secret). */
  readonly credentialOf?: (exec: Readonly<ToolExecution>) => JournalCredential | undefined
  /** As for a file journal: the policy's decision of a call, recorded with its result. */
  readonly policyOf?: (exec: Readonly<ToolExecution>) => JournalPolicyDecision | undefined
}

/** A journal file. */
export interface JournalFileConfig {
  /** The journal file; created when missing, always appended to. */
  readonly path: string
  /**
   * Flush every record to stable storage before the call goes on (`fsync`). Without it a record is
   * in the operating system's hands when the call continues: it survives the process being killed,
   * not the machine losing power. Default false.
   */
  readonly fsync?: boolean
  /**
   * Who a call's agent acts for: when it answers, every record of the call carries it as
   * `identity` (a host serving authenticated callers, one agent scope per caller, names them here).
   */
  readonly identify?: (agent: Agent | undefined) => JournalIdentity | undefined
  /** The credential a call of an upstream tool carried, recorded with its result (never the secret). */
  readonly credentialOf?: (exec: Readonly<ToolExecution>) => JournalCredential | undefined
  /**
   * The policy's decision of a call (`tools.policyDecision(exec)` in the library): when it answers,
   * the call's result record carries it as `policy` (the deciding rule and the policy's digest).
   */
  readonly policyOf?: (exec: Readonly<ToolExecution>) => JournalPolicyDecision | undefined
}

/**
 * The session journal: appends one JSON line per event — a call started, approval asked
 * and answered, the frozen final result, a Code Mode sub-dispatch — each with `ts`, `callId`,
 * `rootCallId`, `parentCallId`, `agentId` and `toolName` (see `JournalRecord`). Each line is written
 * synchronously before the pipeline goes on, so a result that a caller received is already in the
 * journal; several processes may append to one file. Plugged into an agent's context it records only
 * that agent's calls (and its descendants').
 *
 * The model loop adds its side of the conversation (turns, the model's text, steps) to the same
 * journal when its `journal` or `store` option names it.
 *
 * Usage: `ctx.plugin(Journal, { path: 'session.jsonl', fsync: false })`; read it with `readJournal`.
 */
export class Journal {
  static readonly inject = ['tools']

  /** The journal file ('' for a store journal). */
  readonly path: string
  /** The store, for a store journal. */
  readonly store: Store | undefined
  /** Appends not yet settled, each settling with its error, or undefined once acknowledged. */
  private readonly unacknowledged = new Set<Promise<unknown>>()
  /** A call's records before its body (started, approval), each settling with its append's error or undefined. */
  private readonly beforeBody = new Map<ToolExecutionToken, Promise<unknown>[]>()
  private storeFailure: unknown
  private fd: number | undefined
  private readonly fsync: boolean
  private readonly identify: JournalConfig['identify']
  private readonly credentialOf: JournalConfig['credentialOf']
  private readonly policyOf: JournalConfig['policyOf']
  private readonly started = new Map<ToolExecutionToken, number>()
  /** Per call that asked for approval: when it asked, how long it waited in all, when the answer let it run. */
  private readonly approvals = new Map<ToolExecutionToken, { asked?: number; waited?: number; freed?: number }>()
  private readonly warn: (format: string, ...args: unknown[]) => void

  constructor(ctx: Context, config: JournalConfig) {
    if (config === null || typeof config !== 'object')
      throw new ConfigError('Journal config', 'expected { path, fsync? } or { store }')
    const logger = ctx.logger('journal')
    this.warn = (format, ...args) => logger.warn(format, ...args)
    this.fsync = false
    if (config.identify !== undefined && typeof config.identify !== 'function') {
      throw new ConfigError('Journal config.identify', 'expected a function when present')
    }
    this.identify = config.identify
    this.credentialOf = typeof config.credentialOf === 'function' ? config.credentialOf : undefined
    if (config.policyOf !== undefined && typeof config.policyOf !== 'function')
      throw new ConfigError('Journal config.policyOf', 'expected a function when present')
    this.policyOf = config.policyOf
    if ('store' in config && config.store !== undefined) {
      const store = config.store
      if (store === null || typeof store !== 'object' || typeof store.append !== 'function')
        throw new ConfigError('Journal config.store', 'expected a Store (createFileStore, createPostgresStore)')
      this.path = ''
      this.store = store
      this.listen(ctx)
      // A call's body runs only once the records before it (call-started, the approval) are acknowledged:
      // a crash mid-call then always leaves the evidence that the call started. A store that cannot
      // take them fails the call instead of running it without that evidence.
      ctx.on(
        'tools/execute',
        directListener(async (exec, next) => {
          await this.acknowledged(exec.token)
          return next()
        }),
      )
      return
    }
    this.store = undefined
    if (typeof config.path !== 'string' || config.path === '') {
      throw new ConfigError('Journal config.path', 'expected a non-empty file path')
    }
    if (config.fsync !== undefined && typeof config.fsync !== 'boolean') {
      throw new ConfigError('Journal config.fsync', 'expected a boolean when present')
    }
    this.path = config.path
    this.fsync = config.fsync === true
    const fd = openSync(config.path, 'a+')
    try {
      repairTornTail(fd)
    } catch (error) {
      closeSync(fd)
      throw error
    }
    this.fd = fd
    ctx.effect(() => () => this.close(), 'journal file')
    this.listen(ctx)
  }

  /**
   * Resolves once every record written so far is acknowledged by the store (at once for a file
   * journal, whose writes are synchronous). Rejects with the store's error if one could not be.
   * Records written while it waits are not waited for: under load, a response or a body waits for
   * the batches holding its own records, not for every batch that follows.
   */
  async flush(): Promise<void> {
    // Every failure among the records waited for is this caller's: a response never goes out as if
    // its records were kept because another caller was told of their loss first.
    const failed =
      this.unacknowledged.size > 0 ? (await Promise.all([...this.unacknowledged])).find((e) => e) : undefined
    if (failed !== undefined) throw failed
    const failure = this.storeFailure
    if (failure !== undefined) {
      this.storeFailure = undefined
      throw failure
    }
  }

  /** Until the call's records before its body are acknowledged; rejects with the store's error if one was not. */
  private async acknowledged(token: ToolExecutionToken): Promise<void> {
    const records = this.beforeBody.get(token)
    if (records === undefined) return
    this.beforeBody.delete(token)
    for (const error of await Promise.all(records)) if (error !== undefined) throw error
  }

  private listen(ctx: Context): void {
    ctx.on(
      'tools/call',
      directListener((exec) => {
        this.started.set(exec.token, performance.now())
        this.write({ ...this.base('call-started', exec), arguments: exec.arguments }, exec.token)
      }),
    )
    ctx.on('tools/approval-asked', (request, exec) => {
      const timing = this.approvals.get(exec.token) ?? {}
      timing.asked = performance.now()
      this.approvals.set(exec.token, timing)
      this.write({ ...this.base('approval-asked', exec, request.parentCallId), request }, exec.token)
    })
    ctx.on('tools/approval-answered', (request, outcome, source, exec) => {
      this.timeAnswer(exec.token, outcome.kind)
      this.write(
        {
          ...this.base('approval-answered', exec, request.parentCallId),
          outcome,
          standing: source === 'standing',
          source,
          ...(outcome.decidedBy === undefined ? {} : { decidedBy: outcome.decidedBy }),
        },
        exec.token,
      )
    })
    ctx.on(
      'tools/result',
      directListener((exec, result) => this.onResult(exec, result)),
    )
    ctx.on('tools/code-dispatch', (record, dispatch) => this.onCodeDispatch(record, dispatch))
  }

  /**
   * The wait an answer ends (from its ask, when this process saw one) and, for an answer that lets
   * the call run, the moment its run starts: the result then tells waiting and running apart.
   */
  private timeAnswer(token: ToolExecutionToken, kind: string): void {
    const now = performance.now()
    const timing = this.approvals.get(token) ?? {}
    if (timing.asked !== undefined) timing.waited = (timing.waited ?? 0) + Math.max(0, now - timing.asked)
    timing.asked = undefined
    if (kind === 'allowed-once' || kind === 'allowed-always') timing.freed = now
    this.approvals.set(token, timing)
  }

  private onResult(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): void {
    const now = performance.now()
    const start = this.started.get(exec.token)
    this.started.delete(exec.token)
    // A call that ended before its body (refused, denied) has nobody waiting for these.
    this.beforeBody.delete(exec.token)
    const timing = this.approvals.get(exec.token)
    this.approvals.delete(exec.token)
    const durationMs = start === undefined ? 0 : Math.max(0, now - start)
    this.write({
      ...this.base('result', exec),
      result,
      ...this.credentialRecord(exec),
      durationMs,
      ...(timing?.waited !== undefined ? { approvalWaitMs: timing.waited } : {}),
      ...(timing?.freed !== undefined ? { runMs: Math.max(0, now - timing.freed) } : {}),
      ...this.policyDecisionOf(exec),
    })
  }

  private onCodeDispatch(record: CodeDispatchRecord, dispatch: CodeDispatchLog): void {
    const agent = dispatch.agent ?? dispatch.exec.agent
    this.write({
      v: JOURNAL_VERSION,
      type: 'code-dispatch',
      ts: Date.now(),
      callId: record.subCallId,
      rootCallId: record.rootCallId,
      parentCallId: record.parentCallId,
      agentId: agent?.id ?? null,
      toolName: record.name,
      ...this.identityOf(agent),
      record,
    })
  }

  private base<T extends JournalRecord['type']>(
    type: T,
    exec: Readonly<ToolExecution>,
    parentCallId?: string | null,
  ): JournalRecordBase & { type: T } {
    return {
      v: JOURNAL_VERSION,
      type,
      ts: Date.now(),
      callId: exec.callId,
      rootCallId: exec.rootCallId,
      parentCallId: parentCallId !== undefined ? parentCallId : exec.parentCallId,
      agentId: exec.agent?.id ?? null,
      toolName: exec.name,
      ...this.identityOf(exec.agent),
      ...(exec.storedTurnId === undefined ? {} : { storedTurnId: exec.storedTurnId }),
      ...(exec.turnId === undefined ? {} : { turnId: exec.turnId }),
    }
  }

  /** `{ credential }` when the host names the credential of the call; a throwing `credentialOf` records none. */
  private credentialRecord(exec: Readonly<ToolExecution>): { credential?: JournalCredential } {
    try {
      const found = this.credentialOf?.(exec)
      return found === undefined ? {} : { credential: found }
    } catch (error) {
      this.warn('credentialOf() threw for call %s: %s', exec.callId, error)
      return {}
    }
  }

  /** `{ policy }` when the host names the call's policy decision; a throwing `policyOf` records none. */
  private policyDecisionOf(exec: Readonly<ToolExecution>): { policy?: JournalPolicyDecision } {
    if (this.policyOf === undefined) return {}
    try {
      const found = this.policyOf(exec)
      if (found === undefined) return {}
      return {
        policy: {
          decision: found.decision,
          ...(found.rule !== undefined ? { rule: found.rule } : {}),
          digest: found.digest,
        },
      }
    } catch (error) {
      this.warn('policyOf() threw for call %s: %s', exec.callId, error)
      return {}
    }
  }

  /** `{ identity }` when the host names the agent's caller; a throwing `identify` records none. */
  private identityOf(agent: Agent | undefined): { identity?: JournalIdentity } {
    if (this.identify === undefined) return {}
    try {
      const found = this.identify(agent)
      if (found === undefined) return {}
      return { identity: { subject: found.subject, groups: [...found.groups], scopes: [...found.scopes] } }
    } catch (error) {
      this.warn('identify() threw for agent %s: %s', agent?.id ?? '(none)', error)
      return {}
    }
  }

  /**
   * Append one record as one line. A failed write is logged; it never reaches the call. In a store,
   * a record written for `token` before its body is waited for by that body.
   */
  private write(record: JournalRecord & { source?: ApprovalAnswerSource }, token?: ToolExecutionToken): void {
    if (this.store !== undefined) {
      const appended = this.writeToStore(this.store, record)
      if (token !== undefined) {
        const records = this.beforeBody.get(token)
        if (records === undefined) this.beforeBody.set(token, [appended])
        else records.push(appended)
      }
      return
    }
    const fd = this.fd
    if (fd === undefined) return
    try {
      writeAll(fd, Buffer.from(`${serialize(record)}\n`, 'utf8'))
      if (this.fsync) fsyncSync(fd)
    } catch (error) {
      this.warn('could not append a %s record to %s: %s', record.type, this.path, error)
    }
  }

  /** Append to the store; the promise settles with the append's error, or undefined once acknowledged. */
  private writeToStore(store: Store, record: JournalRecord): Promise<unknown> {
    const appended: Promise<unknown> = store.append([record]).then(
      () => {
        this.unacknowledged.delete(appended)
        return undefined
      },
      (error: unknown) => {
        this.unacknowledged.delete(appended)
        this.storeFailure = error
        this.warn('could not append a %s record to the store: %s', record.type, error)
        return error ?? new StoreError('STORE_UNAVAILABLE', 'the store refused a journal append without a reason')
      },
    )
    this.unacknowledged.add(appended)
    return appended
  }

  private close(): void {
    const fd = this.fd
    this.fd = undefined
    this.started.clear()
    this.approvals.clear()
    if (fd === undefined) return
    try {
      if (this.fsync) fsyncSync(fd)
      closeSync(fd)
    } catch (error) {
      this.warn('could not close %s: %s', this.path, error)
    }
  }
}

/** `JSON.stringify`, or an iterative serializer for values nested too deeply for it (lossless JSON only). */
function serialize(record: object): string {
  try {
    return JSON.stringify(record)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    return previewJson(record, Number.POSITIVE_INFINITY)
  }
}

function writeAll(fd: number, bytes: Buffer): void {
  let offset = 0
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset)
}

/**
 * A crash mid-write leaves a torn last line; end it so the next record starts on a line of its own
 * (readers skip the torn fragment instead of losing the record glued to it).
 */
function repairTornTail(fd: number): void {
  const size = fstatSync(fd).size
  if (size === 0) return
  const last = Buffer.alloc(1)
  readSync(fd, last, 0, 1, size - 1)
  if (last[0] !== 0x0a) writeAll(fd, Buffer.from('\n'))
}
