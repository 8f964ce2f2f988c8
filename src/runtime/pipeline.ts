import type { ContentBlock, UserMessage } from '../contract/content.js'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  PostToolDecision,
  PreToolDecision,
  ToolDispatchExecution,
  ToolExecuteOptions,
  ToolExecution,
  ToolExecutionInput,
  ToolExecutionResult,
  ToolExecutionToken,
  ToolProgress,
  ToolRunContext,
  TraceContext,
} from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { snapshotJsonValue } from '../json/index.js'
import { ToolOutputError } from '../schema/errors.js'
import { getJsonSchemaValidator } from '../schema/validator.js'
import { parseTraceparent, validTracestate } from '../util/traceparent.js'
import { askApproval } from './approval-flow.js'
import { snapshotContent, snapshotDeferredContext, snapshotUserMessages, thrownContent } from './content-check.js'
import { ToolAbortedBeforeDispatchError, ToolAbortedError, ToolDeniedError } from './errors.js'
import { BodySignal } from './lifecycle.js'
import { observe } from './observe.js'
import { checkProgress, emitProgress } from './progress.js'
import type { RegistryCore } from './registry.js'
import { describeThrown, failure, failureFrom, failureOf, success, withDeferred } from './results.js'
import type { ResolvedView, Scope } from './scope.js'
import { fuseSignals } from './signal-fusion.js'
import {
  abortedOf,
  describeValue,
  isAbortSignal,
  readInherited,
  readOwn,
  readThrown,
  reasonOf,
  UNREADABLE,
  warnContained,
} from './untrusted.js'
import { admitted, waterfall } from './waterfall.js'

const allow: PreToolDecision = Object.freeze({ kind: 'allow' })
const allowNext = (): Promise<PreToolDecision> => Promise.resolve(allow)
const accept: PostToolDecision = Object.freeze({ kind: 'accept' })
const acceptNext = (): Promise<PostToolDecision> => Promise.resolve(accept)

/** Per-call mutable bookkeeping; never exposed. */
interface CallState {
  deferred: UserMessage[] | undefined
  concluded: boolean
  bodyInvoked: boolean
  /** Settles (never rejects) once the body and its normalization settled. */
  body: Promise<ToolExecutionResult> | undefined
  /** Set once the dispatch waterfall settled: a late `next()` must not start the body. */
  closed: boolean
  /** Set once the body settled: later `exec.progress(...)` reports are no-ops. */
  settled: boolean
}

/** The input's fields, each read exactly once (own-property reads; a throwing getter is a problem, not a throw). */
interface ReadInput {
  readonly callId: string
  readonly rootCallId: string | undefined
  readonly name: string
  readonly arguments: unknown
  readonly agent: unknown
  readonly parent: ToolExecutionToken | undefined
  readonly signal: AbortSignal
}

function readInput(input: unknown): ReadInput | string {
  if (typeof input !== 'object' || input === null) return 'input: expected a ToolExecutionInput object'
  const callId = readOwn(input, 'callId')
  const rootCallId = readOwn(input, 'rootCallId')
  const name = readOwn(input, 'name')
  const args = readOwn(input, 'arguments')
  const agent = readOwn(input, 'agent')
  const parent = readOwn(input, 'parent')
  const signal = readOwn(input, 'signal')
  const fields: Array<[string, unknown]> = [
    ['callId', callId],
    ['rootCallId', rootCallId],
    ['name', name],
    ['arguments', args],
    ['agent', agent],
    ['parent', parent],
    ['signal', signal],
  ]
  for (const [field, value] of fields) {
    if (value === UNREADABLE) return `input.${field}: could not be read (reading it threw)`
  }
  if (typeof callId !== 'string') return 'input.callId: expected a string'
  if (typeof name !== 'string') return 'input.name: expected a string'
  if (!isAbortSignal(signal)) return 'input.signal: a caller-owned AbortSignal is required'
  if (rootCallId !== undefined && typeof rootCallId !== 'string')
    return 'input.rootCallId: expected a string when present'
  if (parent !== undefined && typeof parent !== 'symbol')
    return 'input.parent: expected the ToolExecutionToken of an enclosing execution when present'
  return {
    callId,
    rootCallId,
    name,
    arguments: args,
    agent,
    parent: parent as ToolExecutionToken | undefined,
    signal,
  }
}

/**
 * Runs one call through pre-execute → guards → around-dispatch → body → post-execute →
 * finalizeContent → final freeze → tools/result. Never rejects.
 */
export async function runPipeline(
  core: RegistryCore,
  input: ToolExecutionInput,
  options?: ToolExecuteOptions,
): Promise<ToolExecutionResult> {
  const read = readInput(input)
  if (typeof read === 'string') return freezeFailure(failure(read, { name: 'TypeError', code: 'INVALID_INPUT' }))
  const scope = read.agent === undefined ? core.global : core.scopeOfAgent(read.agent as Agent)
  if (scope === undefined || (read.agent !== undefined && scope.agent === undefined)) {
    return freezeFailure(
      failure('input.agent: not an agent created by createAgent()', { name: 'TypeError', code: 'INVALID_INPUT' }),
    )
  }
  const halted = core.lifetime.halted(scope, 'tools.execute()')
  if (halted !== undefined) return freezeFailure(failureFrom(halted, halted.code))
  let args: JsonValue = null
  let argsError: unknown
  try {
    args = snapshotJsonValue(read.arguments, 'arguments')
  } catch (error) {
    argsError = error
  }
  const parent = read.parent
  const enclosing = parent !== undefined ? core.live.get(parent) : undefined
  const host = readHostOptions(options)
  if (typeof host === 'string') return freezeFailure(failure(host, { name: 'TypeError', code: 'INVALID_INPUT' }))
  const rootCallId = read.rootCallId ?? enclosing?.exec.rootCallId ?? read.callId
  const token = Symbol(read.callId) as ToolExecutionToken
  // The stored turn a nested call belongs to is its enclosing call's.
  const storedTurnId = host.storedTurnId ?? enclosing?.exec.storedTurnId
  const turnId = host.turnId ?? enclosing?.exec.turnId
  const traceId = host.traceId ?? enclosing?.exec.traceId
  const traceContext = host.traceContext ?? enclosing?.exec.traceContext
  const exec: ToolExecution = Object.freeze({
    callId: read.callId,
    rootCallId,
    parentCallId: enclosing?.exec.callId ?? null,
    name: read.name,
    arguments: args,
    // The agent the registry created for this scope, never the caller's (possibly shape-shifting) object.
    agent: scope.agent,
    parent,
    signal: read.signal,
    token,
    ...(storedTurnId === undefined ? {} : { storedTurnId }),
    ...(turnId === undefined ? {} : { turnId }),
    ...(traceId === undefined ? {} : { traceId }),
    ...(traceContext === undefined ? {} : { traceContext }),
  })
  // A nested call asks the approval channel of the call that encloses it, unless given its own.
  const approval = host.approval ?? enclosing?.approval
  core.live.set(token, { exec, approval, host })
  if (core.hasHooks('tools/call')) observe(core, scope, 'tools/call', [exec])
  try {
    const view = core.view(scope)
    let definition = view.byName.get(exec.name)
    // Under `code` a model-direct call reaches only the transport.
    if (definition && view.mode === 'code' && parent === undefined && !core.isTransport(exec.name))
      definition = undefined
    const finalize = definition?.finalizeContent
    // An approver's edited arguments replace the execution for every later phase.
    // A nested call may suspend only when the enclosing program said it can pause (it passed onSuspended).
    const call: CallBox = {
      exec,
      suspended: undefined,
      decision: host.decision,
      approval,
      durable: host.onSuspended !== undefined,
    }
    let result: ToolExecutionResult
    if (argsError !== undefined) {
      result = failure(describeThrown(argsError), { name: 'ToolArgsError', code: 'INVALID_ARGS' })
    } else if (definition === undefined) {
      const missing = core.notFound(exec.name, view, parent === undefined)
      // The suggestions are names the caller may call: structured for programs, in the message for the model.
      result = missing.suggestions.length
        ? failure(missing.message, { name: missing.name, code: missing.code, suggestions: [...missing.suggestions] })
        : failureFrom(missing, 'TOOL_ERROR')
    } else if (abortedOf(exec.signal)) {
      result = failureFrom(new ToolAbortedBeforeDispatchError(exec.name), 'ABORTED_BEFORE_DISPATCH')
    } else {
      result = await policyAndDispatch(core, call, definition, view, scope)
    }
    const final = finalizeOnce(core, scope, definition, finalize, call.exec, result)
    if (call.suspended !== undefined && host.onSuspended !== undefined) notifySuspended(core, host, call.suspended)
    if (core.hasHooks('tools/result')) {
      const emitted = emitResult(core, scope, call.exec, final)
      if (emitted !== undefined) await emitted
    }
    return final
  } catch (error) {
    // Defensive: every phase contains its own failures; this only guards the pipeline's own bugs.
    return freezeFailure(failureFrom(error, 'INTERNAL_ERROR'))
  } finally {
    core.live.delete(token)
    core.lifetime.settled(core.live)
  }
}

/** The execution as later phases see it (an approver may edit the arguments) and a suspension, if any. */
export interface CallBox {
  exec: ToolExecution
  suspended: ApprovalRequest | undefined
  /** The host's decision for this call's ask (a resumed turn); cleared once used. */
  decision: ApprovalOutcome | undefined
  /** The host's approval channel for this call (its own, or its enclosing call's). */
  readonly approval: ApprovalService | undefined
  /** Set once the call went through an approval ask (a call is asked at most once). */
  asked?: boolean
  /** The host can keep a suspension of this call (a nested one is otherwise denied). */
  readonly durable?: boolean
}

const NO_HOST_OPTIONS: ToolExecuteOptions = Object.freeze({})

/** The host options, each field read once; a malformed one refuses the call before anything runs. */
/** A W3C Trace Context trace id: 16 bytes in lowercase hex, never all zero. */
const TRACE_ID = /^(?!0{32}$)[0-9a-f]{32}$/
/** A `traceContext` option that is not a valid W3C trace context. */
const INVALID = Symbol('invalid')

/** The host's `traceContext` option, read field by field from an untrusted object. */
function readTraceContext(value: unknown): TraceContext | undefined | typeof UNREADABLE | typeof INVALID {
  if (value === undefined || value === UNREADABLE) return value
  if (typeof value !== 'object' || value === null) return INVALID
  const traceparent = readOwn(value, 'traceparent')
  const tracestate = readOwn(value, 'tracestate')
  if (traceparent === UNREADABLE || tracestate === UNREADABLE) return UNREADABLE
  if (parseTraceparent(traceparent) === undefined) return INVALID
  if (tracestate !== undefined && validTracestate(tracestate) === undefined) return INVALID
  return Object.freeze({
    traceparent: traceparent as string,
    ...(tracestate === undefined ? {} : { tracestate: tracestate as string }),
  })
}

function readHostOptions(options: unknown): ToolExecuteOptions | string {
  if (options === undefined) return NO_HOST_OPTIONS
  if (typeof options !== 'object' || options === null) return 'options: expected an object when present'
  const decision = readOwn(options, 'decision')
  const approval = readOwn(options, 'approval')
  const onSuspended = readOwn(options, 'onSuspended')
  const onProgramLog = readOwn(options, 'onProgramLog')
  const storedTurnId = readOwn(options, 'storedTurnId')
  const turnId = readOwn(options, 'turnId')
  const program = readOwn(options, 'program')
  const traceId = readOwn(options, 'traceId')
  const traceContext = readTraceContext(readOwn(options, 'traceContext'))
  if (
    decision === UNREADABLE ||
    approval === UNREADABLE ||
    onSuspended === UNREADABLE ||
    onProgramLog === UNREADABLE ||
    storedTurnId === UNREADABLE ||
    turnId === UNREADABLE ||
    program === UNREADABLE ||
    traceId === UNREADABLE ||
    traceContext === UNREADABLE
  )
    return 'options: a field could not be read (reading it threw)'
  if (decision !== undefined && (typeof decision !== 'object' || decision === null))
    return 'options.decision: expected an approval outcome object when present'
  if (approval !== undefined && typeof readOwnOrProto(approval, 'request') !== 'function')
    return 'options.approval: expected an approval service (an object with a request method) when present'
  if (onSuspended !== undefined && typeof onSuspended !== 'function')
    return 'options.onSuspended: expected a function when present'
  if (onProgramLog !== undefined && typeof onProgramLog !== 'function')
    return 'options.onProgramLog: expected a function when present'
  if (storedTurnId !== undefined && (typeof storedTurnId !== 'string' || storedTurnId === ''))
    return 'options.storedTurnId: expected a non-empty string when present'
  if (turnId !== undefined && (typeof turnId !== 'string' || turnId === ''))
    return 'options.turnId: expected a non-empty string when present'
  if (traceId !== undefined && (typeof traceId !== 'string' || !TRACE_ID.test(traceId)))
    return 'options.traceId: expected a W3C trace id (32 lowercase hex digits, not all zero) when present'
  if (traceContext === INVALID)
    return 'options.traceContext: expected { traceparent: a valid W3C traceparent, tracestate?: at most 512 characters } when present'
  return {
    decision: decision as ApprovalOutcome | undefined,
    approval: approval as ApprovalService | undefined,
    onSuspended: onSuspended as ToolExecuteOptions['onSuspended'],
    ...(onProgramLog === undefined ? {} : { onProgramLog: onProgramLog as ToolExecuteOptions['onProgramLog'] }),
    ...(storedTurnId === undefined ? {} : { storedTurnId: storedTurnId as string }),
    ...(turnId === undefined ? {} : { turnId: turnId as string }),
    ...(traceId === undefined ? {} : { traceId: traceId as string }),
    ...(traceContext === undefined ? {} : { traceContext }),
    ...(program !== undefined && typeof program === 'object' && program !== null
      ? { program: program as ToolExecuteOptions['program'] }
      : {}),
  }
}

function readOwnOrProto(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined
  const found = readInherited(value, key)
  return found === UNREADABLE ? undefined : found
}

function notifySuspended(core: RegistryCore, host: ToolExecuteOptions, request: ApprovalRequest): void {
  try {
    host.onSuspended?.(request)
  } catch (error) {
    warnContained(core, 'an onSuspended callback failed', error)
  }
}

/** Policies, then the body, then post-execute: the call's result before finalizeContent. */
async function policyAndDispatch(
  core: RegistryCore,
  call: CallBox,
  definition: ToolDefinition,
  view: ResolvedView,
  scope: Scope,
): Promise<ToolExecutionResult> {
  // Only a call that meets a pre-execute listener or needsApproval pays for an extra await.
  if (
    core.hasHooks('tools/pre-execute') ||
    (definition.needsApproval !== undefined && definition.needsApproval !== false)
  ) {
    const refused = await askPolicies(core, call, definition, scope)
    if (refused !== undefined) return refused
  }
  const exec = call.exec
  const guarded = runGuards(view, exec)
  if (guarded !== undefined) return guarded
  if (abortedOf(exec.signal) || core.lifetime.halted(scope, 'the call')) return abortedBeforeDispatch(exec)

  const state: CallState = {
    deferred: undefined,
    concluded: false,
    bodyInvoked: false,
    body: undefined,
    closed: false,
    settled: false,
  }
  const dispatched = core.hasHooks('tools/execute')
    ? await dispatchThroughWrappers(core, scope, exec, definition, state)
    : await invokeBody(core, scope, exec, definition, exec.signal, state)
  state.closed = true
  const { result, contexts } = core.hasHooks('tools/post-execute')
    ? await postExecute(core, scope, exec, definition, dispatched, state.deferred)
    : { result: dispatched, contexts: state.deferred }
  return withDeferred(settleSuccess(core, scope, exec, state, result), contexts)
}

/** pre-execute listeners, then the tool's own `needsApproval`: a result refuses the call. */
async function askPolicies(
  core: RegistryCore,
  call: CallBox,
  definition: ToolDefinition,
  scope: Scope,
): Promise<ToolExecutionResult | undefined> {
  if (core.hasHooks('tools/pre-execute')) {
    let decision: unknown
    try {
      decision = await waterfall(core.hooks, scope.dispatchThis, 'tools/pre-execute', [call.exec], allowNext)
    } catch (error) {
      return failureFrom(error, 'POLICY_ERROR')
    }
    const denial = await preDecision(core, scope, call, definition, decision)
    // Disposed while policies ran (an approval service shut down denies): the call was aborted.
    if (core.lifetime.halted(scope, 'the call')) return abortedBeforeDispatch(call.exec)
    if (denial !== undefined) return denial
  }
  // A tool's own `needsApproval` asks like a pre-execute `ask`, without a listener (once per call).
  if (definition.needsApproval !== undefined && definition.needsApproval !== false && !call.asked) {
    const denial = await requiredApproval(core, scope, call, definition)
    if (core.lifetime.halted(scope, 'the call')) return abortedBeforeDispatch(call.exec)
    if (denial !== undefined) return denial
  }
  return undefined
}

/** The scope's guards in order: the first reason denies. */
function runGuards(view: ResolvedView, exec: ToolExecution): ToolExecutionResult | undefined {
  for (const guard of view.guards) {
    let verdict: unknown
    try {
      verdict = guard(exec)
    } catch (error) {
      return failureFrom(error, 'POLICY_ERROR', undefined, 'Guard failed: ')
    }
    if (verdict === undefined) continue
    const reason =
      typeof verdict === 'string'
        ? verdict
        : `guard returned ${describeValue(verdict)} instead of a reason or undefined`
    return failureFrom(new ToolDeniedError(exec.name, reason), 'TOOL_DENIED')
  }
  return undefined
}

/** The around-dispatch waterfall: wrappers may replace only the signal, and never outlive the body. */
async function dispatchThroughWrappers(
  core: RegistryCore,
  scope: Scope,
  exec: ToolExecution,
  definition: ToolDefinition,
  state: CallState,
): Promise<ToolExecutionResult> {
  const dispatch: ToolDispatchExecution = new DispatchView(exec)
  let inner: ToolExecutionResult | undefined
  let dispatched: ToolExecutionResult
  try {
    const returned: unknown = await waterfall(core.hooks, scope.dispatchThis, 'tools/execute', [dispatch], async () => {
      inner = await invokeBody(core, scope, exec, definition, dispatch.signal, state)
      return inner
    })
    dispatched = returned === inner && inner !== undefined ? inner : normalizeAuthored(exec, definition, returned)
  } catch (error) {
    dispatched = failureFrom(error, 'POLICY_ERROR')
  }
  state.closed = true
  // Quiescence: a wrapper that returned early never leaves the body running behind the result.
  if (state.body) await state.body
  return dispatched
}

/** The post-execute waterfall: accept, replace or block the dispatched result. */
async function postExecute(
  core: RegistryCore,
  scope: Scope,
  exec: ToolExecution,
  definition: ToolDefinition,
  dispatched: ToolExecutionResult,
  deferred: UserMessage[] | undefined,
): Promise<{ result: ToolExecutionResult; contexts: UserMessage[] | undefined }> {
  const observed = Object.freeze(withDeferred(dispatched, deferred))
  try {
    const decision: unknown = await waterfall(
      core.hooks,
      scope.dispatchThis,
      'tools/post-execute',
      [exec, observed],
      acceptNext,
    )
    return applyPostDecision(exec, definition, dispatched, deferred, decision)
  } catch (error) {
    return { result: failureFrom(error, 'POLICY_ERROR'), contexts: deferred }
  }
}

/** A success after an abort or disposal is an abort; a success whose body concluded the turn says so. */
function settleSuccess(
  core: RegistryCore,
  scope: Scope,
  exec: ToolExecution,
  state: CallState,
  result: ToolExecutionResult,
): ToolExecutionResult {
  if (result.isError) return result
  if (abortedOf(exec.signal) || core.lifetime.halted(scope, 'the call')) {
    const error = state.bodyInvoked ? new ToolAbortedError(exec.name) : new ToolAbortedBeforeDispatchError(exec.name)
    return failureFrom(error, state.bodyInvoked ? 'ABORTED' : 'ABORTED_BEFORE_DISPATCH')
  }
  return state.concluded ? success(result.value, result.content, result.meta, undefined, true) : result
}

/** Apply a pre-execute decision: undefined lets the call proceed (possibly with edited arguments). */
async function preDecision(
  core: RegistryCore,
  scope: Scope,
  call: CallBox,
  definition: ToolDefinition,
  decision: unknown,
): Promise<ToolExecutionResult | undefined> {
  const exec = call.exec
  if (decision === allow) return undefined
  const isObject = typeof decision === 'object' && decision !== null
  const kind = isObject ? readOwn(decision, 'kind') : undefined
  const reason = isObject ? readOwn(decision, 'reason') : undefined
  if (kind === UNREADABLE || reason === UNREADABLE)
    return invalidDecision('tools/pre-execute', 'the decision could not be read (reading it threw)')
  if (kind === 'allow') return undefined
  if (kind === 'deny') {
    if (typeof reason !== 'string') return invalidDecision('tools/pre-execute', 'a deny decision needs a string reason')
    return failureFrom(new ToolDeniedError(exec.name, reason), 'TOOL_DENIED')
  }
  if (kind === 'ask') {
    if (reason !== undefined && typeof reason !== 'string') {
      return invalidDecision('tools/pre-execute', "an ask decision's reason must be a string when present")
    }
    return ask(core, scope, call, definition, reason)
  }
  return invalidDecision(
    'tools/pre-execute',
    `expected { kind: 'allow' | 'deny' | 'ask' }, got ${describeValue(decision)}`,
  )
}

async function ask(
  core: RegistryCore,
  scope: Scope,
  call: CallBox,
  definition: ToolDefinition,
  reason: string | undefined,
): Promise<ToolExecutionResult | undefined> {
  call.asked = true
  const verdict = await askApproval(core, scope, call, definition, reason)
  if (verdict.proceed) {
    call.exec = verdict.exec
    return undefined
  }
  call.suspended = verdict.suspended
  return verdict.result
}

/** `definition.needsApproval`: `true` or a reason string asks; `false` proceeds; anything else fails closed. */
async function requiredApproval(
  core: RegistryCore,
  scope: Scope,
  call: CallBox,
  definition: ToolDefinition,
): Promise<ToolExecutionResult | undefined> {
  const needs = definition.needsApproval
  let verdict: unknown = needs
  if (typeof needs === 'function') {
    try {
      verdict = needs.call(definition, call.exec.arguments, call.exec)
    } catch (error) {
      return failureFrom(error, 'POLICY_ERROR', undefined, 'needsApproval failed: ')
    }
  }
  if (verdict === false) return undefined
  if (verdict === true) return ask(core, scope, call, definition, undefined)
  if (typeof verdict === 'string' && verdict.length > 0) return ask(core, scope, call, definition, verdict)
  return invalidDecision(
    'needsApproval',
    `expected true, false or a non-empty reason string, got ${describeValue(verdict)}`,
  )
}

function invalidDecision(event: string, problem: string): ToolExecutionResult {
  return failure(`Invalid ${event} decision: ${problem}`, { name: 'TypeError', code: 'INVALID_DECISION' })
}

/**
 * The around-dispatch view: identity fields are frozen own data, `signal` is an accessor on
 * the prototype whose setter accepts only another AbortSignal, so it can be replaced but never removed
 * (`delete` finds no own property to remove). A class keeps the object's shape fixed; a per-call
 * accessor defined with `defineProperty` forced a slow dictionary-mode object.
 */
class DispatchView {
  readonly callId: string
  readonly rootCallId: string
  readonly parentCallId: string | null
  readonly name: string
  readonly arguments: ToolExecution['arguments']
  readonly agent: ToolExecution['agent']
  readonly parent: ToolExecution['parent']
  readonly token: ToolExecution['token']
  #signal: AbortSignal

  constructor(exec: ToolExecution) {
    this.callId = exec.callId
    this.rootCallId = exec.rootCallId
    this.parentCallId = exec.parentCallId
    this.name = exec.name
    this.arguments = exec.arguments
    this.agent = exec.agent
    this.parent = exec.parent
    this.token = exec.token
    this.#signal = exec.signal
    Object.freeze(this)
  }

  get signal(): AbortSignal {
    return this.#signal
  }

  set signal(next: AbortSignal) {
    if (!isAbortSignal(next)) {
      throw new TypeError('exec.signal: a tools/execute wrapper may replace the signal only with another AbortSignal')
    }
    this.#signal = next
  }
}

// Not an async function: it hands back the body's own promise, one promise and two turns of the
// microtask queue fewer between the body's value and the result.
function invokeBody(
  core: RegistryCore,
  scope: Scope,
  exec: ToolExecution,
  definition: ToolDefinition,
  wrapperSignal: AbortSignal,
  state: CallState,
): Promise<ToolExecutionResult> {
  if (state.closed || state.bodyInvoked) {
    return Promise.resolve(
      failure('tools/execute: next() was called after the dispatch waterfall settled; the body was not started', {
        name: 'Error',
        code: 'POLICY_ERROR',
      }),
    )
  }
  // Fuse the caller's signal back in so no wrapper can detach caller cancellation; the fusion is
  // released when the body settles, so a long-lived caller signal holds nothing per finished call.
  const fused = wrapperSignal === exec.signal ? undefined : fuseSignals(exec.signal, wrapperSignal)
  const signal = fused === undefined ? exec.signal : fused.signal
  if (abortedOf(signal)) {
    fused?.release()
    return Promise.resolve(failureFrom(new ToolAbortedBeforeDispatchError(exec.name), 'ABORTED_BEFORE_DISPATCH'))
  }
  state.bodyInvoked = true
  // Disposal aborts the body through this signal; it is linked only if the body reads it.
  const link = new BodySignal(core.lifetime, scope, signal, fused)
  const run: ToolRunContext = runContext(exec, link, {
    deferContext(context: UserMessage): void {
      const snapshot = snapshotDeferredContext(context)
      if (state.deferred) state.deferred.push(snapshot)
      else state.deferred = [snapshot]
    },
    concludeTurn(): void {
      state.concluded = true
    },
    progress(progress: ToolProgress): void {
      const checked = checkProgress(progress)
      if (state.settled || !core.hasHooks('tools/progress')) return
      emitProgress(core, scope, exec, checked)
    },
  })
  const body = (async (): Promise<ToolExecutionResult> => {
    let value: unknown
    try {
      value = await definition.execute(exec.arguments, run)
    } catch (error) {
      // A body that rejects with the caller's own cancellation was cancelled, not failed.
      const reading = readThrown(error)
      if (abortedOf(exec.signal) && (error === reasonOf(exec.signal) || reading.name === 'AbortError')) {
        return failureFrom(new ToolAbortedError(exec.name), 'ABORTED')
      }
      if (link.disposed) return failureFrom(new ToolAbortedError(exec.name), 'ABORTED')
      return failureOf(reading, 'TOOL_ERROR', undefined, '', thrownContent(error))
    } finally {
      state.settled = true
      link.release()
      fused?.release()
    }
    return projectValue(exec, definition, value)
  })()
  state.body = body
  return body
}

const LINK = Symbol('toolgate.bodySignal')
type LinkedRun = ToolRunContext & { readonly [LINK]: BodySignal }
// One accessor shared by every run context: a getter written in the object literal would be a new
// closure per call and turn each context into a slow dictionary object when frozen (measured at
// about 2 µs and much of the GC churn per call); this descriptor costs a property.
const RUN_SIGNAL: PropertyDescriptorMap = {
  signal: {
    get(this: LinkedRun): AbortSignal {
      return this[LINK].signal
    },
    enumerable: true,
  },
}

/**
 * The body's run context: the execution's fields as own enumerable properties (as a spread of it
 * would give), `signal` linked lazily through `link`, and the call's methods.
 */
function runContext(
  exec: ToolExecution,
  link: BodySignal,
  methods: Pick<ToolRunContext, 'deferContext' | 'concludeTurn' | 'progress'>,
): ToolRunContext {
  const run = {
    callId: exec.callId,
    rootCallId: exec.rootCallId,
    // Always set (null for a top-level call): the type promises it, and a body tells a Code Mode sub-call by it.
    parentCallId: exec.parentCallId,
    name: exec.name,
    arguments: exec.arguments,
    agent: exec.agent,
    parent: exec.parent,
    token: exec.token,
    [LINK]: link,
    deferContext: methods.deferContext,
    concludeTurn: methods.concludeTurn,
    progress: methods.progress,
  }
  return Object.freeze(Object.defineProperties(run, RUN_SIGNAL)) as unknown as ToolRunContext
}

/** Snapshot, validate, freeze and render a canonical value. */
function projectValue(exec: ToolExecution, definition: ToolDefinition, raw: unknown): ToolExecutionResult {
  let value: JsonValue
  try {
    value = snapshotJsonValue(raw, 'value')
  } catch (error) {
    return failure(`Tool "${exec.name}" returned a value that is not lossless JSON: ${describeThrown(error)}`, {
      name: 'ToolOutputError',
      code: 'INVALID_TOOL_OUTPUT',
    })
  }
  const validator = getJsonSchemaValidator(definition.output.schema)
  if (!validator.isValid(value)) {
    return failureFrom(new ToolOutputError(validator.violations(value, 'value'), exec.name), 'INVALID_TOOL_OUTPUT')
  }
  let content: ContentBlock[]
  let meta: JsonValue | undefined
  try {
    content = snapshotContent(definition.output.render(exec.arguments, value), `${exec.name}.output.render()`)
  } catch (error) {
    return failureFrom(error, 'RENDER_FAILED', undefined, `Tool "${exec.name}" failed to render its output: `)
  }
  const project = definition.output.presentationMeta
  if (project && exec.parent === undefined) {
    try {
      meta = snapshotJsonValue(
        project.call(definition.output, exec.arguments, value),
        `${exec.name}.output.presentationMeta()`,
      )
    } catch (error) {
      return failureFrom(
        error,
        'RENDER_FAILED',
        undefined,
        `Tool "${exec.name}" failed to project its presentation metadata: `,
      )
    }
  }
  return success(value, content, meta, undefined, false)
}

/** A wrapper-authored result is normalized and validated against the resolved tool's declaration. */
function normalizeAuthored(exec: ToolExecution, definition: ToolDefinition, returned: unknown): ToolExecutionResult {
  const isObject = typeof returned === 'object' && returned !== null
  const isError = isObject ? readOwn(returned, 'isError') : undefined
  if (typeof isError !== 'boolean') {
    return failure(`A tools/execute wrapper returned ${describeValue(returned)} instead of a tool result`, {
      name: 'TypeError',
      code: 'INVALID_RESULT',
    })
  }
  const authored = returned as object
  if (!isError) {
    const value = readOwn(authored, 'value')
    if (value === UNREADABLE) {
      return failure('A tools/execute wrapper returned a result whose value could not be read', {
        name: 'TypeError',
        code: 'INVALID_RESULT',
      })
    }
    return projectValue(exec, definition, value)
  }
  const error = readOwn(authored, 'error')
  const message = typeof error === 'object' && error !== null ? readOwn(error, 'message') : undefined
  if (typeof message !== 'string') {
    return failure('A tools/execute wrapper returned a failure without error.message', {
      name: 'TypeError',
      code: 'INVALID_RESULT',
    })
  }
  const info = readOwn(error as object, 'info')
  const rawContent = readOwn(authored, 'content')
  try {
    // Snapshot first (it never runs user code), then look at the copy.
    const snapshot = info === undefined ? undefined : snapshotJsonValue(info, 'result.error.info')
    const record = typeof snapshot === 'object' && snapshot !== null && !Array.isArray(snapshot) ? snapshot : undefined
    const safeInfo =
      typeof record?.name === 'string' && typeof record.code === 'string'
        ? (record as { name: string; code: string })
        : { name: 'Error', code: 'TOOL_ERROR' }
    const content = rawContent === undefined ? undefined : snapshotContent(rawContent, 'result.content')
    return failure(message, safeInfo, content)
  } catch (caught) {
    return failure(`A tools/execute wrapper returned invalid content: ${describeThrown(caught)}`, {
      name: 'TypeError',
      code: 'INVALID_RESULT',
    })
  }
}

function applyPostDecision(
  exec: ToolExecution,
  definition: ToolDefinition,
  result: ToolExecutionResult,
  deferred: UserMessage[] | undefined,
  decision: unknown,
): { result: ToolExecutionResult; contexts: UserMessage[] | undefined } {
  const invalid = (problem: string) => ({ result: invalidDecision('tools/post-execute', problem), contexts: deferred })
  if (decision === accept) return { result, contexts: deferred }
  const isObject = typeof decision === 'object' && decision !== null
  // Every field is read exactly once, up front: a getter cannot answer differently later.
  const kind = isObject ? readOwn(decision, 'kind') : undefined
  if (kind !== 'accept' && kind !== 'block') {
    return invalid(
      kind === UNREADABLE
        ? 'decision.kind could not be read (reading it threw)'
        : `expected { kind: 'accept' | 'block' }, got ${describeValue(decision)}`,
    )
  }
  const d = decision as object
  const fields = {
    additionalContexts: readOwn(d, 'additionalContexts'),
    feedback: kind === 'block' ? readOwn(d, 'feedback') : undefined,
    content: kind === 'accept' ? readOwn(d, 'content') : undefined,
    value: kind === 'accept' ? readOwn(d, 'value') : undefined,
  }
  for (const [field, value] of Object.entries(fields)) {
    if (value === UNREADABLE) return invalid(`decision.${field} could not be read (reading it threw)`)
  }
  let added: UserMessage[] | undefined
  if (fields.additionalContexts !== undefined) {
    try {
      added = snapshotUserMessages(fields.additionalContexts, 'decision.additionalContexts')
    } catch (error) {
      return invalid(describeThrown(error))
    }
  }
  if (kind === 'block') {
    let feedback: ContentBlock[]
    try {
      feedback = snapshotContent(fields.feedback, 'decision.feedback')
    } catch (error) {
      return invalid(describeThrown(error))
    }
    const text = feedback.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
    const message = `Tool "${exec.name}" result was blocked by policy${text ? `: ${text}` : ''}`
    // Block keeps only the decision's contexts.
    return { result: failure(message, { name: 'ToolBlockedError', code: 'TOOL_BLOCKED' }, feedback), contexts: added }
  }
  const contexts = added ? [...(deferred ?? []), ...added] : deferred
  const hasContent = fields.content !== undefined
  const hasValue = fields.value !== undefined
  if (hasContent && hasValue) return invalid('an accept decision may replace content or value, never both')
  if (hasValue) return { result: projectValue(exec, definition, fields.value), contexts }
  if (hasContent) {
    let content: ContentBlock[]
    try {
      content = snapshotContent(fields.content, 'decision.content')
    } catch (error) {
      return invalid(describeThrown(error))
    }
    const replaced = result.isError
      ? failure(
          result.error.message,
          result.error.info ?? { name: 'Error', code: 'TOOL_ERROR' },
          content,
          undefined,
          result.meta,
        )
      : success(result.value, content, result.meta, undefined, false)
    return { result: replaced, contexts }
  }
  return { result, contexts }
}

/**
 * Materialize the candidate, call `finalizeContent` exactly once, and freeze. The
 * definition's own callback runs first (it owns its content boundary); then every admitted
 * `tools/finalize-content` listener — the same last-mile seam opened to deployment-wide policies —
 * sees the result as finalized so far, in registration order, with the same contract.
 */
function finalizeOnce(
  core: RegistryCore,
  scope: Scope,
  definition: ToolDefinition | undefined,
  finalize: ToolDefinition['finalizeContent'],
  exec: ToolExecution,
  result: ToolExecutionResult,
): ToolExecutionResult {
  let candidate = materialize(result)
  if (finalize) {
    const step = finalizeStep(exec, candidate, `finalizeContent of "${exec.name}"`, () =>
      finalize.call(definition, exec, candidate),
    )
    if (step.failed) return step.result
    candidate = step.result
  }
  if (!core.hasHooks('tools/finalize-content')) return candidate
  const thisArg = scope.dispatchThis
  for (const listener of admitted(core.hooks, thisArg, 'tools/finalize-content')) {
    const current = candidate
    const step = finalizeStep(exec, current, 'a tools/finalize-content listener', () =>
      Reflect.apply(listener, thisArg, [exec, current]),
    )
    if (step.failed) return step.result
    candidate = step.result
  }
  return candidate
}

/** One finalizer: `undefined` keeps the content; a throw or non-content answer is a failure not finalized again. */
function finalizeStep(
  exec: ToolExecution,
  candidate: ToolExecutionResult,
  who: string,
  call: () => unknown,
): { failed: boolean; result: ToolExecutionResult } {
  let replacement: unknown
  try {
    replacement = call()
  } catch (error) {
    return {
      failed: true,
      result: freezeFailure(failureFrom(error, 'FINALIZE_FAILED', candidate.additionalContexts, `${who} failed: `)),
    }
  }
  if (replacement === undefined) return { failed: false, result: candidate }
  let content: ContentBlock[]
  try {
    content = snapshotContent(replacement, `${exec.name}.finalizeContent()`)
  } catch (error) {
    return {
      failed: true,
      result: freezeFailure(
        failure(
          `${who} returned invalid content: ${describeThrown(error)}`,
          { name: 'TypeError', code: 'FINALIZE_FAILED' },
          undefined,
          candidate.additionalContexts,
        ),
      ),
    }
  }
  return { failed: false, result: Object.freeze({ ...candidate, content }) as ToolExecutionResult }
}

/** Lossless materialization and deep freeze of every durable field; failures become JSON-safe errors. */
function materialize(result: ToolExecutionResult): ToolExecutionResult {
  try {
    const out: Record<string, unknown> = result.isError
      ? { isError: true, error: snapshotJsonValue(result.error, 'result.error') }
      : { isError: false, value: result.value }
    out.content = snapshotContent(result.content, 'result.content')
    if (result.meta !== undefined) out.meta = snapshotJsonValue(result.meta, 'result.meta')
    if (result.additionalContexts !== undefined && result.additionalContexts.length > 0) {
      out.additionalContexts = snapshotUserMessages(result.additionalContexts, 'result.additionalContexts')
    }
    if (!result.isError && result.concludesTurn === true) out.concludesTurn = true
    return Object.freeze(out) as unknown as ToolExecutionResult
  } catch (error) {
    return freezeFailure(
      failure(`The tool result is not lossless JSON: ${describeThrown(error)}`, {
        name: 'TypeError',
        code: 'INVALID_RESULT',
      }),
    )
  }
}

/** The call never reached its body: aborted by the caller, or its runtime or agent was disposed. */
function abortedBeforeDispatch(exec: ToolExecution): ToolExecutionResult {
  return failureFrom(new ToolAbortedBeforeDispatchError(exec.name), 'ABORTED_BEFORE_DISPATCH')
}

/** Freeze a failure built by the pipeline from strings only. */
function freezeFailure(result: ToolExecutionResult): ToolExecutionResult {
  return snapshotJsonValue(result, 'result') as unknown as ToolExecutionResult
}

/** Whether a listener returned something to wait for (read inside the listener's try: `then` may be a getter). */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}

/**
 * `tools/result` to every admitted listener, each in turn; awaited together only when some returned
 * a promise (`undefined` otherwise, so a call whose listeners are synchronous awaits nothing). One
 * listener that throws or rejects never stops another; their failures are warned about together.
 */
function emitResult(
  core: RegistryCore,
  scope: Scope,
  exec: ToolExecution,
  result: ToolExecutionResult,
): Promise<void> | undefined {
  const thisArg = scope.dispatchThis
  const pending: Promise<unknown>[] = []
  const failed: unknown[] = []
  for (const listener of admitted(core.hooks, thisArg, 'tools/result')) {
    try {
      const returned: unknown = Reflect.apply(listener, thisArg, [exec, result])
      if (isThenable(returned)) pending.push(Promise.resolve(returned))
    } catch (error) {
      failed.push(error)
    }
  }
  const warn = () => {
    if (failed.length > 0) warnContained(core, 'a tools/result listener failed', new AggregateError(failed))
  }
  if (pending.length === 0) {
    warn()
    return undefined
  }
  return Promise.allSettled(pending).then((settled) => {
    for (const outcome of settled) if (outcome.status === 'rejected') failed.push(outcome.reason)
    warn()
  })
}
