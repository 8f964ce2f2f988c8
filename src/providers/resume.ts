// resumeModelLoop: continue a turn that stopped with 'approval-required', here or in another process.

import { replayLogIssues } from '../code-mode/replay-log.js'
import type { ApprovalOutcome, ApprovalRequest, ToolExecutionResult } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolSchema } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { ToolgateError } from '../errors/toolgate-error.js'
import { claimCall, claimsDirectory } from '../journal/claims.js'
import { readJournal } from '../journal/read-journal.js'
import type { JournalRecord } from '../journal/records.js'
import type { Store } from '../journal/store.js'
import { cloneJsonValue } from '../json/index.js'
import { normalizeApprovalOutcome } from '../runtime/index.js'
import { formatModule } from './formats.js'
import { SYNTHETIC_ID_PREFIX } from './gemini.js'
import {
  type ClaimGate,
  checkOptions,
  deferredOf,
  driveModelLoop,
  type ModelLoopCallResult,
  type ModelLoopPending,
  type ModelLoopResult,
  type ModelLoopState,
  type RunModelLoopOptions,
  withExecute,
} from './model-loop.js'
import { canonicalJson, sealVerifies, stateKeyBytes } from './state-seal.js'
import { stripStrictNulls } from './strict-schema.js'
import type { ProviderFormat, ProviderToolCall } from './types.js'

/** Options of {@link resumeModelLoop}: those of `runModelLoop`, with `state` instead of `messages`. */
export interface ResumeModelLoopOptions<F extends ProviderFormat = ProviderFormat>
  extends Omit<RunModelLoopOptions<F>, 'messages'> {
  /** The `state` an `'approval-required'` result carried (plain JSON, e.g. read back from a file). */
  readonly state: unknown
  /**
   * Decisions by `callId`, from the host (a person, a UI): only pending calls may be decided. A call
   * without a decision stays pending. Never taken from anything the model wrote. Decisions recorded
   * in the state itself (`state.decisions`, written by `toolgate view --approve --state FILE`) are
   * applied too; a decision here that contradicts a recorded one is refused.
   */
  readonly decisions?: Readonly<Record<string, ApprovalOutcome>>
  /**
   * The journal the earlier attempts wrote (`Journal`'s path). With it, a pending call that an
   * interrupted resume already ran is never run again: its journaled result is used, and a call
   * that started but left no result is reported in `unproven` (answered `OUTCOME_UNKNOWN`) instead
   * of being guessed at.
   */
  readonly journal?: string
  /**
   * The store the turn's journal lives in (instead of `journal`): its records are the crash
   * evidence, and each call is claimed there before it runs, so across every process that shares
   * the store a call runs at most once.
   */
  readonly store?: Store
  /**
   * With `store`: the id the turn was saved under (`store.saveTurn`). The decisions recorded for it
   * (by `toolgate view --store`) are applied, each call's claim is taken only while its recorded
   * decision stands, and the store's turn is replaced by the next suspension or closed at the end.
   */
  readonly turnId?: string
}

/** A pending call whose earlier attempt started but left no result: it was not run again. */
export interface UnprovenCall {
  readonly callId: string
  readonly toolName: string
  readonly reason: string
}

/** What {@link resumeModelLoop} returns: the loop's result plus what it could not prove. */
export interface ResumeModelLoopResult<F extends ProviderFormat = ProviderFormat> extends ModelLoopResult<F> {
  readonly unproven: UnprovenCall[]
  /**
   * With `journal`: pending calls another resume of the same state claimed first (in this process or
   * another one on the machine). They were not run here; each was answered `ALREADY_RUN`.
   */
  readonly alreadyRun: UnprovenCall[]
}

/** A state or decisions that cannot be resumed; nothing ran. `issues` are path-qualified. */
export class ResumeStateError extends ToolgateError {
  readonly code = 'INVALID_RESUME' as const
  readonly issues: readonly string[]
  constructor(issues: readonly string[]) {
    super(`resumeModelLoop refused:${issues.map((issue) => `\n  - ${issue}`).join('')}`)
    this.name = 'ResumeStateError'
    this.issues = Object.freeze([...issues])
  }
}

/**
 * Continue a turn that stopped with `'approval-required'`. Applies `decisions` (keyed by
 * `callId`) to the pending calls, runs only the calls that never completed, answers the batch and
 * continues the loop — in this process or another one started later. A call that completed before the
 * suspension (its result is in `state`, or in `journal`) is never executed again; a pending call
 * without a decision stays pending (the result is `'approval-required'` again); a decision for a call
 * that is not pending, an edited or truncated state, or a state from another model format or agent
 * is refused with a `ResumeStateError` before anything runs.
 */
export async function resumeModelLoop<F extends ProviderFormat>(
  options: ResumeModelLoopOptions<F>,
): Promise<ResumeModelLoopResult<F>> {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('resumeModelLoop(options)', 'expected an object')
  const format = options.model?.format
  formatModule(format, 'resumeModelLoop(options).model.format')
  const key =
    options.stateKey === undefined ? undefined : stateKeyBytes(options.stateKey, 'resumeModelLoop(options).stateKey')
  let loopOptions = { ...options, messages: [] } as RunModelLoopOptions<F>
  try {
    checkOptions(loopOptions)
  } catch (error) {
    if (error instanceof Error) error.message = error.message.replace(/^runModelLoop/, 'resumeModelLoop')
    throw error
  }
  const store = checkStore(options)
  const turnId = store !== undefined ? options.turnId : undefined
  // The calls of a stored turn's resume carry its id into the journal: its evidence is its own.
  if (turnId !== undefined) {
    const tools = loopOptions.tools
    loopOptions = {
      ...loopOptions,
      tools: withExecute(tools, (input, host) => tools.execute(input, { ...host, storedTurnId: turnId })),
    }
  }
  const turn = store !== undefined && options.turnId !== undefined ? await store.loadTurn(options.turnId) : undefined
  if (store !== undefined && options.turnId !== undefined && (turn === undefined || turn.closed))
    throw new ResumeStateError([
      `turnId: ${JSON.stringify(options.turnId)} is ${turn === undefined ? 'not in the store' : 'closed (resumed already)'}`,
    ])
  const state = readState<F>(options.state, format, options.agent?.id ?? null, key)
  const pending = state.pending as ModelLoopPending<F> & {
    results: (ModelLoopCallResult | null)[]
    requests: (ApprovalRequest | null)[]
  }
  const decisions = readDecisions(options.decisions, pending, 'decisions')
  // Decisions recorded in the stored state (the viewer's approve/deny buttons write them there):
  // applied like `options.decisions`; the two may agree on a call, never contradict each other.
  const stored = state as { decisions?: unknown }
  if (stored.decisions !== undefined) {
    addRecordedDecisions(decisions, readDecisions(stored.decisions, pending, 'state.decisions'), 'the state')
    delete stored.decisions
  }
  // Decisions recorded in the store for this turn: applied the same way, and each call's claim
  // depends on its recorded decision still standing.
  const recordedInStore = new Map<string, ApprovalOutcome>()
  if (turn !== undefined) {
    const recorded = readDecisions(turn.decisions, pending, 'store decisions')
    addRecordedDecisions(decisions, recorded, 'the store')
    for (const [callId, outcome] of recorded) recordedInStore.set(callId, outcome)
  }
  // A call of a tool a native search found is checked against that tool's schema too.
  const sent = [...options.tools.schemas(options.agent), ...deferredOf(options.tools, options.agent)]
  checkConsistency(state, format, sent)
  const known = new Map<string, ToolExecutionResult>()
  const unproven: UnprovenCall[] = []
  if (options.journal !== undefined) {
    if (typeof options.journal !== 'string' || options.journal === '')
      throw new ConfigError('resumeModelLoop(options).journal', 'expected the journal file path')
    const records = readJournal(options.journal)
    await readEvidence(options.journal, records, pending, state.agentId ?? null, undefined, known, unproven)
  } else if (store !== undefined) {
    const records = (async function* () {
      for await (const { record } of store.read()) yield record
    })()
    await readEvidence('in the store', records, pending, state.agentId ?? null, turnId, known, unproven)
  }
  for (const call of unproven) decisions.delete(call.callId)
  const alreadyRun: UnprovenCall[] = []
  const claim =
    options.journal !== undefined
      ? claimGate(options.journal, state.agentId ?? null, alreadyRun)
      : store !== undefined
        ? storeClaimGate(store, options.turnId, recordedInStore, state.agentId ?? null, alreadyRun)
        : undefined
  const result = await driveModelLoop(loopOptions, state, { decisions, known, ...(claim ? { claim } : {}) })
  if (store !== undefined && options.turnId !== undefined) {
    if (result.stopReason === 'approval-required' && result.state !== undefined)
      await store.saveTurn(options.turnId, result.state as unknown as JsonValue)
    else await store.closeTurn(options.turnId)
  }
  return { ...result, unproven, alreadyRun }
}

function checkStore(options: Pick<ResumeModelLoopOptions, 'store' | 'turnId' | 'journal'>): Store | undefined {
  const { store, turnId } = options
  if (store !== undefined && (store === null || typeof store !== 'object' || typeof store.claim !== 'function'))
    throw new ConfigError('resumeModelLoop(options).store', 'expected a Store (createFileStore, createPostgresStore)')
  if (store !== undefined && options.journal !== undefined)
    throw new ConfigError('resumeModelLoop(options).store', 'give either journal (a file) or store, not both')
  if (turnId !== undefined && (typeof turnId !== 'string' || turnId === ''))
    throw new ConfigError('resumeModelLoop(options).turnId', 'expected a non-empty string')
  if (turnId !== undefined && store === undefined)
    throw new ConfigError('resumeModelLoop(options).turnId', 'needs store (the turn is saved there)')
  return store
}

/** The claim gate over a store: the first claimant of a call runs it, across every process sharing the store. */
function storeClaimGate(
  store: Store,
  turnId: string | undefined,
  recorded: ReadonlyMap<string, ApprovalOutcome>,
  agentId: string | null,
  alreadyRun: UnprovenCall[],
): ClaimGate {
  return async (call) => {
    let reason: string
    try {
      const decision = recorded.get(call.callId)
      const claim = await store.claim(
        // Keyed by turn and call: a later turn that reuses the call id has its own claim.
        {
          ...(turnId === undefined ? {} : { turnId }),
          agentId,
          callId: call.callId,
          toolName: call.name,
          arguments: call.arguments,
        },
        turnId !== undefined && decision !== undefined ? { turnId, kind: decision.kind } : undefined,
      )
      if (claim.won) return { release: () => void claim.release().catch(() => {}) }
      reason = `"${call.name}" (call ${call.callId}) was not run here: ${claim.reason}${claim.holder ? ` (process ${claim.holder.pid}, ${new Date(claim.holder.ts).toISOString()})` : ''}; another resume of this turn ran it or holds it`
    } catch (error) {
      reason = `"${call.name}" (call ${call.callId}) could not be claimed in the store (${error instanceof Error ? error.message : String(error)}); it was not run`
    }
    alreadyRun.push(Object.freeze({ callId: call.callId, toolName: call.name, reason }))
    return { skip: failure(reason, 'AlreadyRunError', 'ALREADY_RUN') }
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Validate a state read back from storage; every problem is reported with its path. */
function readState<F extends ProviderFormat>(
  raw: unknown,
  format: F,
  agentId: string | null,
  key: Uint8Array | undefined,
): ModelLoopState<F> {
  const issues: string[] = []
  if (!isObject(raw)) throw new ResumeStateError(['state: expected the object an approval-required result carried'])
  let state: Record<string, unknown>
  try {
    // A mutable copy: the loop appends to it.
    state = cloneJsonValue(raw, 'state') as Record<string, unknown>
  } catch (error) {
    throw new ResumeStateError([error instanceof Error ? error.message : String(error)])
  }
  checkSeal(state, key)
  delete state.seal // the loop seals any state it returns afresh
  if (state.v !== 1) issues.push(`state.v: expected 1, got ${JSON.stringify(state.v)}`)
  if (state.format !== format) {
    issues.push(
      `state.format: the state is in ${JSON.stringify(state.format)}, the model speaks ${JSON.stringify(format)}`,
    )
  }
  if (state.agentId !== agentId) {
    issues.push(
      `state.agentId: the turn ran for ${JSON.stringify(state.agentId)}, the resume names ${JSON.stringify(agentId)}`,
    )
  }
  if (!Array.isArray(state.messages)) issues.push('state.messages: expected an array')
  if (!Array.isArray(state.steps)) issues.push('state.steps: expected an array')
  else
    state.steps.forEach((step, i) => {
      if (!isObject(step) || !Array.isArray(step.reply) || !Array.isArray(step.calls) || !Array.isArray(step.results))
        issues.push(`state.steps[${i}]: expected { reply, calls, results }`)
    })
  const pending = state.pending
  if (!isObject(pending)) {
    issues.push('state.pending: missing — the state has no calls waiting for a decision')
    throw new ResumeStateError(issues)
  }
  if (!Array.isArray(pending.reply)) issues.push('state.pending.reply: expected an array')
  if (pending.turnId !== undefined && (typeof pending.turnId !== 'string' || pending.turnId === ''))
    issues.push('state.pending.turnId: expected a non-empty string when present')
  const calls = pending.calls
  if (!Array.isArray(calls) || calls.length === 0) {
    issues.push('state.pending.calls: expected a non-empty array')
    throw new ResumeStateError(issues)
  }
  const results = pending.results
  const requests = pending.requests
  if (!Array.isArray(results) || results.length !== calls.length)
    issues.push(`state.pending.results: expected an array of ${calls.length} entries (one per call)`)
  if (!Array.isArray(requests) || requests.length !== calls.length)
    issues.push(`state.pending.requests: expected an array of ${calls.length} entries (one per call)`)
  const programs = pending.programs
  if (programs !== undefined && (!Array.isArray(programs) || programs.length !== calls.length))
    issues.push(`state.pending.programs: expected an array of ${calls.length} entries (one per call)`)
  if (issues.length > 0) throw new ResumeStateError(issues)
  const seen = new Set<string>()
  let waiting = 0
  calls.forEach((call: unknown, i) => {
    const at = `state.pending.calls[${i}]`
    if (!isObject(call) || typeof call.callId !== 'string' || typeof call.name !== 'string' || !('arguments' in call)) {
      issues.push(`${at}: expected { callId, name, arguments }`)
      return
    }
    if (seen.has(call.callId)) issues.push(`${at}.callId: "${call.callId}" appears twice; decisions would be ambiguous`)
    seen.add(call.callId)
    const result = (results as unknown[])[i]
    const request = (requests as unknown[])[i]
    if (result !== null) {
      if (!isObject(result) || result.callId !== call.callId || !isResult(result.result))
        issues.push(`state.pending.results[${i}]: expected null or the result of call "${call.callId}"`)
      if (request !== null) issues.push(`state.pending.requests[${i}]: a completed call cannot also be pending`)
      return
    }
    const program = (programs as unknown[] | undefined)?.[i] ?? null
    if (program !== null) {
      const before = issues.length
      programIssues(call, request, program, `state.pending.programs[${i}]`, issues)
      if (issues.length === before) waiting++
      return
    }
    if (!isObject(request) || request.callId !== call.callId || request.toolName !== call.name) {
      issues.push(
        `state.pending.requests[${i}]: call "${call.callId}" has no result, so it needs its pending approval request (edited or truncated state?)`,
      )
      return
    }
    waiting++
  })
  if (issues.length === 0 && waiting === 0) issues.push('state.pending: no call is waiting for a decision')
  if (issues.length > 0) throw new ResumeStateError(issues)
  return state as unknown as ModelLoopState<F>
}

/**
 * A paused Code Mode program: its waiting sub-calls are this call's, the call's request is the
 * first of them, and its replay log is well-formed and was written by the call's own program.
 */
function programIssues(
  call: Record<string, unknown>,
  request: unknown,
  program: unknown,
  at: string,
  issues: string[],
): void {
  if (!isObject(program) || !Array.isArray(program.waiting) || program.waiting.length === 0) {
    issues.push(`${at}: expected { waiting, log } of a paused program`)
    return
  }
  const ids = new Set<string>()
  program.waiting.forEach((sub: unknown, k) => {
    if (
      !isObject(sub) ||
      typeof sub.callId !== 'string' ||
      !sub.callId.startsWith(`${String(call.callId)}:code:`) ||
      sub.rootCallId !== call.callId ||
      sub.parentCallId !== call.callId ||
      typeof sub.toolName !== 'string' ||
      ids.has(sub.callId)
    )
      issues.push(`${at}.waiting[${k}]: not a waiting sub-call of call "${String(call.callId)}"`)
    else ids.add(sub.callId)
  })
  if (!isObject(request) || !sameJson(request, program.waiting[0]))
    issues.push(
      `state.pending.requests: call "${String(call.callId)}" must wait on its program's first waiting sub-call`,
    )
  const args = isObject(call.arguments) ? call.arguments : {}
  issues.push(...replayLogIssues(program.log, args.code, `${at}.log`))
  // Every waiting sub-call is one the log marks waiting, at its own position.
  const log = isObject(program.log) && Array.isArray(program.log.calls) ? program.log.calls : []
  for (const id of ids) {
    const index = Number(id.slice(`${String(call.callId)}:code:`.length))
    const entry: unknown = log[index - 1]
    if (!Number.isInteger(index) || !isObject(entry) || entry.waiting !== true)
      issues.push(`${at}.waiting: sub-call "${id}" is not a waiting sub-call of the log`)
  }
}

/**
 * With a key, only a state whose seal verifies is resumed; without one, a sealed state is refused
 * too (it was sealed so that it would be checked, and nothing here can check it).
 */
function checkSeal(state: Record<string, unknown>, key: Uint8Array | undefined): void {
  if (key === undefined) {
    if (state.seal !== undefined)
      throw new ResumeStateError(['state.seal: the state is sealed; pass the key it was sealed with as stateKey'])
    return
  }
  if (typeof state.seal !== 'string')
    throw new ResumeStateError(['state.seal: missing — with stateKey, only a state sealed with that key is resumed'])
  let verifies: boolean
  try {
    verifies = sealVerifies(state, key)
  } catch (error) {
    throw new ResumeStateError([`state: cannot be checked against its seal (${String(error)})`])
  }
  if (!verifies)
    throw new ResumeStateError([
      'state.seal: does not verify under stateKey (the state was changed after it was sealed, or sealed with another key)',
    ])
}

/**
 * Everything the state says about the waiting batch must agree: the pending calls, the assistant
 * reply they came from (the tail of the conversation), the approval requests, and the results
 * already recorded. A call can only run as the model wrote it and as the person was asked about it.
 */
function checkConsistency<F extends ProviderFormat>(
  state: ModelLoopState<F>,
  format: F,
  schemas: readonly ToolSchema[],
): void {
  const issues: string[] = []
  try {
    consistencyIssues(state, format, schemas, issues)
  } catch (error) {
    issues.push(`state: cannot be checked (${error instanceof Error ? error.message : String(error)})`)
  }
  if (issues.length > 0) throw new ResumeStateError(issues)
}

function consistencyIssues<F extends ProviderFormat>(
  state: ModelLoopState<F>,
  format: F,
  schemas: readonly ToolSchema[],
  issues: string[],
): void {
  const pending = state.pending as ModelLoopPending<F>
  const calls = pending.calls
  const results = pending.results as readonly (ModelLoopCallResult | null)[]
  const requests = pending.requests as readonly (ApprovalRequest | null)[]
  const reply = pending.reply as readonly unknown[]
  const messages = state.messages as readonly unknown[]
  if (
    reply.length === 0 ||
    reply.length > messages.length ||
    canonicalJson(messages.slice(messages.length - reply.length)) !== canonicalJson(reply)
  )
    issues.push('state.pending.reply: is not the end of state.messages (the assistant reply the calls came from)')
  const written = replyCalls(format, reply)
  if (written.length !== calls.length) {
    issues.push(
      `state.pending.calls: ${calls.length} calls, but the stored assistant reply carries ${written.length} (edited state?)`,
    )
    return
  }
  const schemaOf = new Map(schemas.map((schema) => [schema.name, schema.parameters]))
  calls.forEach((call, i) => {
    const at = `state.pending.calls[${i}]`
    const model = written[i]
    if (!sameCallId(model.callId, call.callId))
      issues.push(
        `${at}.callId: ${JSON.stringify(call.callId)}, but the stored reply has ${JSON.stringify(model.callId)}`,
      )
    if (model.name !== call.name)
      issues.push(`${at}.name: ${JSON.stringify(call.name)}, but the stored reply calls ${JSON.stringify(model.name)}`)
    if (
      (model.kind ?? null) !== (call.kind ?? null) ||
      (model.argumentsError === undefined) !== (call.argumentsError === undefined)
    )
      issues.push(`${at}: is not the call the stored reply carries`)
    const result = results[i]
    if (result !== null && result.name !== call.name)
      issues.push(`state.pending.results[${i}].name: ${JSON.stringify(result.name)} is not the call's tool`)
    const request = requests[i]
    if (request === null) return
    // A call that will run: its arguments are those the model wrote and the person was asked about.
    if (!argumentsMatch(model.arguments, call.arguments, schemaOf.get(call.name)))
      issues.push(`${at}.arguments: differ from the arguments in the stored assistant reply`)
    const where = `state.pending.requests[${i}]`
    if ((pending.programs?.[i] ?? null) !== null) {
      // A paused program's request is its sub-call's (checked with the program in readState).
      if (request.agentId !== (state.agentId ?? null))
        issues.push(`${where}.agentId: ${JSON.stringify(request.agentId)} is not the state's agent`)
      return
    }
    if (canonicalJson(request.arguments) !== canonicalJson(call.arguments))
      issues.push(`${where}.arguments: differ from ${at}.arguments`)
    if (request.agentId !== (state.agentId ?? null))
      issues.push(`${where}.agentId: ${JSON.stringify(request.agentId)} is not the state's agent`)
    if (request.rootCallId !== call.callId || request.parentCallId !== null)
      issues.push(`${where}: not the request of model call ${JSON.stringify(call.callId)}`)
  })
}

/** The calls the stored assistant reply carries, read the way the adapter read the response. */
function replyCalls<F extends ProviderFormat>(format: F, reply: readonly unknown[]): ProviderToolCall[] {
  const module = formatModule(format, 'resumeModelLoop')
  const asObject = (value: unknown) => (isObject(value) ? value : {})
  switch (format) {
    case 'openai-chat':
      return reply.flatMap((message) => module.parseToolCalls({ choices: [{ message }] }, undefined))
    case 'openai-responses':
      return module.parseToolCalls({ output: reply }, undefined)
    case 'anthropic':
      return reply.flatMap((message) => module.parseToolCalls({ content: asObject(message).content }, undefined))
    default:
      return reply.flatMap((content) => module.parseToolCalls(asObject(content), undefined))
  }
}

/** Gemini calls without an id get a made-up one on each read: such ids match any other made-up id. */
function sameCallId(written: string, stored: string): boolean {
  if (written.startsWith(SYNTHETIC_ID_PREFIX)) return stored.startsWith(SYNTHETIC_ID_PREFIX)
  return written === stored
}

/** Equal, or equal once a strict model's nulls for optional properties are read as absent. */
function argumentsMatch(written: JsonValue, stored: JsonValue, schema: JsonValue | undefined): boolean {
  const text = canonicalJson(stored)
  if (canonicalJson(written) === text) return true
  return schema !== undefined && canonicalJson(stripStrictNulls(schema, written)) === text
}

/** Equal JSON; a value too deep to compare counts as different (the resume is refused, not crashed). */
function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b)
  } catch {
    return false
  }
}

function isResult(value: unknown): value is ToolExecutionResult {
  return isObject(value) && typeof value.isError === 'boolean' && Array.isArray(value.content)
}

/** Check the host's decisions against the pending calls; nothing runs when one is refused. */
/**
 * Add decisions recorded in `where` (the state, the store) to the given ones: they may agree on a
 * call, never contradict each other.
 */
function addRecordedDecisions(
  decisions: Map<string, ApprovalOutcome>,
  recorded: ReadonlyMap<string, ApprovalOutcome>,
  where: string,
): void {
  const conflicts: string[] = []
  for (const [callId, outcome] of recorded) {
    const given = decisions.get(callId)
    if (given === undefined) decisions.set(callId, outcome)
    else if (given.kind !== outcome.kind)
      conflicts.push(
        `decisions[${JSON.stringify(callId)}]: "${given.kind}" contradicts the decision recorded in ${where} ("${outcome.kind}")`,
      )
  }
  if (conflicts.length > 0) throw new ResumeStateError(conflicts)
}

function readDecisions(
  raw: unknown,
  pending: {
    calls: readonly ProviderToolCall[]
    requests: (ApprovalRequest | null)[]
    programs?: readonly ({ waiting: readonly ApprovalRequest[] } | null)[]
  },
  where: string,
): Map<string, ApprovalOutcome> {
  const decisions = new Map<string, ApprovalOutcome>()
  if (raw === undefined) return decisions
  if (!isObject(raw)) throw new ResumeStateError([`${where}: expected an object keyed by callId`])
  const issues: string[] = []
  for (const [callId, value] of Object.entries(raw)) {
    const at = `${where}[${JSON.stringify(callId)}]`
    // A paused program's waiting sub-call is decided by its own id; the program call itself is not.
    const inProgram = pending.programs?.some((program) => program?.waiting.some((r) => r.callId === callId)) === true
    const index = inProgram ? -2 : pending.calls.findIndex((call) => call.callId === callId)
    if (index >= 0 && (pending.programs?.[index] ?? null) !== null) {
      issues.push(`${at}: call "${callId}" is a paused program; decide its waiting sub-calls by their ids`)
      continue
    }
    if (index === -1) {
      issues.push(`${at}: no call "${callId}" in the pending batch`)
      continue
    }
    if (index >= 0 && pending.requests[index] === null) {
      issues.push(`${at}: call "${callId}" is not pending (it already completed); it is never run again`)
      continue
    }
    const kind = isObject(value) ? value.kind : undefined
    const outcome = normalizeApprovalOutcome(value)
    if (kind !== outcome.kind) {
      issues.push(
        `${at}: expected an approval outcome, ${outcome.kind === 'denied' ? outcome.reason : 'got another kind'}`,
      )
      continue
    }
    if (outcome.kind === 'suspended') continue // still no decision: the call stays pending
    decisions.set(callId, outcome)
  }
  if (issues.length > 0) throw new ResumeStateError(issues)
  return decisions
}

/**
 * The gate that claims each call beside the journal right before it runs: the first resume to
 * claim a call runs it; any other (here or in another process) answers it `ALREADY_RUN`.
 */
function claimGate(journal: string, agentId: string | null, alreadyRun: UnprovenCall[]): ClaimGate {
  return (call) => {
    let reason: string
    try {
      const claim = claimCall(journal, { agentId, callId: call.callId, toolName: call.name, arguments: call.arguments })
      if (claim.won) return { release: claim.release }
      const by =
        claim.holder === undefined ? '' : ` (process ${claim.holder.pid}, ${new Date(claim.holder.ts).toISOString()})`
      reason = `"${call.name}" (call ${call.callId}) was already run by another resume of this turn${by}; it was not run again here`
    } catch (error) {
      // Without a claim nothing proves the call runs only once: it is not run.
      reason = `"${call.name}" (call ${call.callId}) could not be claimed in ${claimsDirectory(journal)} (${error instanceof Error ? error.message : String(error)}); it was not run`
    }
    alreadyRun.push(Object.freeze({ callId: call.callId, toolName: call.name, reason }))
    return { skip: failure(reason, 'AlreadyRunError', 'ALREADY_RUN') }
  }
}

function failure(message: string, name: string, code: string): ToolExecutionResult {
  return Object.freeze({
    isError: true,
    error: Object.freeze({ message, info: Object.freeze({ name, code }) }),
    content: Object.freeze([Object.freeze({ type: 'text' as const, text: message })]),
  }) as unknown as ToolExecutionResult
}

/** Whether `request` asked about the pending call `entry` watches: its tool, its arguments. */
function asks(
  request: ApprovalRequest,
  entry: { index: number; toolName: string },
  pending: { calls: readonly ProviderToolCall[] },
): boolean {
  return request.toolName === entry.toolName && sameJson(request.arguments, pending.calls[entry.index].arguments)
}

/**
 * What the journal proves about the pending calls: a result recorded after the call's suspension is
 * used as is; a call started after its suspension without a result is unproven (not run again).
 */
async function readEvidence(
  path: string,
  records: AsyncIterable<JournalRecord>,
  pending: {
    calls: readonly ProviderToolCall[]
    requests: (ApprovalRequest | null)[]
    programs?: readonly (object | null)[]
  },
  agentId: string | null,
  turnId: string | undefined,
  known: Map<string, ToolExecutionResult>,
  unproven: UnprovenCall[],
): Promise<void> {
  interface Watched {
    index: number
    toolName: string
    started: boolean
    result: ToolExecutionResult | undefined
    asked: ApprovalRequest | undefined
    /** With a stored turn: the request its suspending run made (untagged), if one matches the call. */
    askedBefore?: ApprovalRequest
  }
  const watched = new Map<string, Watched>()
  pending.calls.forEach((call, i) => {
    // A paused program's evidence is its replay log (its sub-calls are journaled under their own ids).
    if (pending.requests[i] !== null && (pending.programs?.[i] ?? null) === null)
      watched.set(call.callId, { index: i, toolName: call.name, started: false, result: undefined, asked: undefined })
  })
  for await (const record of records) {
    const entry = watched.get(record.callId)
    if (entry === undefined || record.agentId !== agentId || record.parentCallId !== null) continue
    // Keyed by turn and call: another stored turn's records are never this turn's evidence, even
    // where its model reused the call id. Records without a turn (the run that suspended, a resume
    // without one) show what was asked; only this turn's resumes ran its calls.
    const own = record.storedTurnId === turnId
    if (!own && record.storedTurnId !== undefined) continue
    // The latest request the journal shows for the call: what the person was asked about.
    if (record.type === 'approval-asked') {
      if (own) entry.asked = record.request
      // Other turns' suspending runs ask under the same id too: the one that matches is this turn's.
      else
        entry.askedBefore = asks(record.request, entry, pending)
          ? record.request
          : (entry.askedBefore ?? record.request)
    }
    if (!own || record.toolName !== entry.toolName) continue
    if (record.type === 'approval-answered' && record.outcome.kind === 'suspended') {
      // A (re)suspension: only what happened after the latest one counts.
      entry.started = false
      entry.result = undefined
    } else if (record.type === 'call-started') {
      entry.started = true
      entry.result = undefined
    } else if (record.type === 'result' && entry.started) {
      const code = record.result.isError ? record.result.error?.info?.code : undefined
      if (code !== 'APPROVAL_SUSPENDED') entry.result = Object.freeze(record.result)
    }
  }
  const issues: string[] = []
  for (const [callId, entry] of watched) {
    const at = `state.pending.calls[${entry.index}]`
    const asked = entry.asked ?? entry.askedBefore
    if (asked === undefined) issues.push(`${at}: the journal ${path} shows no approval request for call "${callId}"`)
    else if (asked.toolName !== entry.toolName)
      issues.push(
        `${at}.name: ${JSON.stringify(entry.toolName)}, but the journal asked about ${JSON.stringify(asked.toolName)}`,
      )
    else if (!sameJson(asked.arguments, pending.calls[entry.index].arguments))
      issues.push(`${at}.arguments: differ from the arguments the journal's approval request shows`)
  }
  if (issues.length > 0) throw new ResumeStateError(issues)
  for (const [callId, entry] of watched) {
    if (entry.result !== undefined) known.set(callId, entry.result)
    else if (entry.started) {
      const reason = `an earlier resume started "${entry.toolName}" (call ${callId}) and stopped before its result was recorded; whether it took effect is unknown, so it was not run again`
      unproven.push(Object.freeze({ callId, toolName: entry.toolName, reason }))
      known.set(callId, failure(reason, 'OutcomeUnknownError', 'OUTCOME_UNKNOWN'))
    }
  }
}
