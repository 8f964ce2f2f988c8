// runModelLoop: call the model, run its calls through executeBatch, append the results, repeat.

import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ProgramResumption,
  ProgramSuspension,
  ToolExecuteOptions,
  ToolExecutionFailure,
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolProgress,
} from '../contract/execution.js'
import type { ToolDefinition, ToolSchema } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { ToolgateError } from '../errors/toolgate-error.js'
import type { Store } from '../journal/store.js'
import { type BatchToolRuntime, executeBatch } from '../scheduling/execute-batch.js'
import { formatModule } from './formats.js'
import { checkLoopJournal, LoopJournal } from './loop-journal.js'
import type { ModelDelta, ModelReply, ProviderModel } from './model.js'
import { type StateKey, stateKeyBytes, stateSeal } from './state-seal.js'
import { type DeferredToolsSource, deferredSchemas } from './tool-search.js'
import type { ProviderFormat, ProviderMessage, ProviderToolCall } from './types.js'
import { sumUsage, type TokenUsage } from './usage.js'

export type ModelLoopStopReason = 'done' | 'concluded' | 'max-steps' | 'aborted' | 'approval-required'

/** The part of `ctx.tools` the loop uses. */
export interface ModelLoopTools extends BatchToolRuntime {
  schemas(scope?: Agent): ToolSchema[]
  /** `tools.execute` with the host options: a resumed call's decision, the suspension callback. */
  execute(input: ToolExecutionInput, options?: ToolExecuteOptions): Promise<ToolExecutionResult>
  /** The scope's deferred tools (`ctx.tools` has it): each request carries them for a native tool search. */
  deferred?(scope?: Agent): string[]
  get?(name: string, scope?: Agent): ToolDefinition | undefined
}

/** One settled call of a step (plain JSON). */
export interface ModelLoopCallResult {
  readonly callId: string
  readonly name: string
  /** `'custom'` when it answers a custom tool call (see `ProviderToolCall.kind`). */
  readonly kind?: 'custom'
  readonly result: ToolExecutionResult
}

/** One model request and what came of it (plain JSON, so a loop's state can be stored). */
export interface ModelLoopStep<F extends ProviderFormat = ProviderFormat> {
  /** The model's own messages of this step. */
  readonly reply: readonly ProviderMessage<F>[]
  /** The calls it emitted, in order (arguments already parsed). */
  readonly calls: readonly ProviderToolCall[]
  /** One result per call, in call order. */
  readonly results: readonly ModelLoopCallResult[]
  /** The tokens the step's model request used, when the provider reported them. */
  readonly usage?: TokenUsage
}

/** What `onEvent` reports. */
export type ModelLoopEvent<F extends ProviderFormat = ProviderFormat> =
  | { readonly type: 'model-request'; readonly step: number; readonly messages: readonly ProviderMessage<F>[] }
  | {
      readonly type: 'model-response'
      readonly step: number
      readonly messages: readonly ProviderMessage<F>[]
      readonly calls: readonly ProviderToolCall[]
    }
  | {
      readonly type: 'tool-start'
      readonly step: number
      readonly index: number
      readonly call: ProviderToolCall
      readonly mode: ToolExecutionMode
    }
  | {
      readonly type: 'tool-result'
      readonly step: number
      readonly index: number
      readonly call: ProviderToolCall
      readonly result: ToolExecutionResult
    }
  | {
      /** What a running call reported through `exec.progress(...)` (its own or a nested call's). */
      readonly type: 'tool-progress'
      readonly step: number
      readonly index: number
      readonly call: ProviderToolCall
      readonly progress: ToolProgress
    }
  | (ModelDelta & { readonly step: number })
  | {
      /** A step is over: its reply is in, and each of its calls has its result. */
      readonly type: 'step-end'
      readonly step: number
      /** The tokens the step's request used, when the provider reported them. */
      readonly usage?: TokenUsage
    }

export interface RunModelLoopOptions<F extends ProviderFormat = ProviderFormat> {
  /** `ctx.tools` (the runtime whose pipeline runs every call). */
  readonly tools: ModelLoopTools
  /** The agent the calls run for (its scope decides what the model sees). */
  readonly agent?: Agent
  readonly model: ProviderModel<F>
  /** The conversation to continue, in the model's format. Not mutated. */
  readonly messages: readonly ProviderMessage<F>[]
  /** Model requests at most (default {@link DEFAULT_MAX_STEPS}). */
  readonly maxSteps?: number
  /** Overlapping parallel calls at most (executeBatch's `maxParallel`). */
  readonly maxParallel?: number
  readonly signal?: AbortSignal
  /** Progress for a UI. Failures are contained. */
  readonly onEvent?: (event: ModelLoopEvent<F>) => void
  /**
   * A secret the program holds (at least 16 bytes): an `'approval-required'` state is sealed with
   * it (`state.seal`, an HMAC-SHA256 over the whole state), and `resumeModelLoop` given the same key
   * refuses a state whose seal does not verify.
   */
  readonly stateKey?: StateKey
  /**
   * The session's journal file (the path `Journal` writes): the loop appends its side of the
   * conversation there — `turn-started` with the user's prompt, a `model-reply` per model request
   * with its text and the calls it emitted, `step-ended` with the token usage and how the calls were
   * scheduled, and `turn-ended` — so that the journal read back tells the whole session.
   */
  readonly journal?: string
  /** The store the session's journal lives in (instead of `journal`): the same records go there. */
  readonly store?: Store
}

export interface ModelLoopResult<F extends ProviderFormat = ProviderFormat> {
  /**
   * The input conversation plus everything appended (every emitted call answered) — except under
   * `'approval-required'`, where the last model reply's calls wait for decisions (see `state`).
   */
  readonly messages: ProviderMessage<F>[]
  readonly steps: ModelLoopStep<F>[]
  readonly stopReason: ModelLoopStopReason
  /** The tokens every model request of this run used (a resumed run: the stored steps' too). */
  readonly usage: TokenUsage
  /** Under `'approval-required'`: the serializable requests that wait for a decision, in call order. */
  readonly pending?: ApprovalRequest[]
  /**
   * Under `'approval-required'`: where the loop stands (plain JSON — the conversation, the batch and
   * the results already obtained). Store it; hand it to `resumeModelLoop` with the decisions.
   */
  readonly state?: ModelLoopState<F>
}

export const DEFAULT_MAX_STEPS = 25

/** A model request failed (not through the loop's own signal); carries the conversation so far. */
export class ModelLoopError extends ToolgateError {
  readonly code = 'MODEL_REQUEST_FAILED' as const
  readonly messages: unknown[]
  readonly steps: ModelLoopStep[]
  constructor(message: string, state: { messages: unknown[]; steps: ModelLoopStep[] }, cause: unknown) {
    super(message, { cause })
    this.name = 'ModelLoopError'
    this.messages = state.messages
    this.steps = state.steps
  }
}

/**
 * Where a loop stands between two actions (plain JSON). `pending` holds calls the model
 * emitted (its reply is already in `messages`) whose results are not appended yet.
 */
export interface ModelLoopState<F extends ProviderFormat = ProviderFormat> {
  /** State format version (set on a suspended state). */
  v?: 1
  /** The model format the conversation is in (set on a suspended state). */
  format?: F
  /** The agent the calls run for, or null (set on a suspended state). */
  agentId?: string | null
  messages: ProviderMessage<F>[]
  steps: ModelLoopStep<F>[]
  pending?: ModelLoopPending<F>
  /**
   * Decisions recorded with a stored suspended state, by call id (`toolgate view --approve --state
   * FILE` writes them when a person clicks approve or deny). `resumeModelLoop` applies them like its
   * `decisions` option; a state it returns never carries them.
   */
  decisions?: Record<string, ApprovalOutcome>
  /** With `stateKey`: the HMAC-SHA256 seal over everything else in the state. */
  seal?: string
}

/** A batch the model emitted whose results are not all appended yet. */
export interface ModelLoopPending<F extends ProviderFormat = ProviderFormat> {
  readonly reply: readonly ProviderMessage<F>[]
  readonly calls: readonly ProviderToolCall[]
  /** The tokens the reply's request used, when reported. */
  readonly usage?: TokenUsage
  /** Per call: its result once it completed, else null (absent: nothing ran yet). */
  readonly results?: readonly (ModelLoopCallResult | null)[]
  /** Per call: the approval request it waits on, else null. */
  readonly requests?: readonly (ApprovalRequest | null)[]
  /**
   * Per call: a paused Code Mode program's waiting sub-calls and replay log, else null (absent: no
   * program paused). Its `requests` entry is the first waiting sub-call's request.
   */
  readonly programs?: readonly (ProgramSuspension | null)[]
  /**
   * The turn whose model reply emitted the batch (its journal records' `turnId`): the batch's calls
   * carry it into the journal, in this run and in every resume, so a viewer tells them apart from
   * another turn's calls with the same ids.
   */
  readonly turnId?: string
}

/** What a resume hands the loop: decisions by callId and results proven elsewhere (the journal). */
export interface PendingControl {
  readonly decisions: ReadonlyMap<string, ApprovalOutcome>
  readonly known: ReadonlyMap<string, ToolExecutionResult>
  /** Asked right before each call of the batch runs: run it, or answer `skip` instead. */
  readonly claim?: ClaimGate
}

/**
 * A resume's gate before a call runs: `skip` answers the call without running it (another process
 * claimed it); otherwise the call runs, and `release` gives the claim back if it suspended again.
 */
export type ClaimGate = (call: ProviderToolCall) => ClaimGateAnswer | Promise<ClaimGateAnswer>

type ClaimGateAnswer = { readonly skip: ToolExecutionResult } | { readonly skip?: undefined; release(): void }

/**
 * Call the model, run its tool calls with `executeBatch`, append the results, repeat, until the
 * model answers without calls (`'done'`), a result concludes the turn (`'concluded'`), `maxSteps`
 * requests were made (`'max-steps'`), or `signal` aborts (`'aborted'`). Every call the model
 * emitted gets its result message, whatever happened, so the conversation stays valid.
 */
export function runModelLoop<F extends ProviderFormat>(options: RunModelLoopOptions<F>): Promise<ModelLoopResult<F>> {
  checkOptions(options)
  return driveModelLoop(options, { messages: [...options.messages], steps: [] })
}

/**
 * Run a loop on from `state` (a fresh one, or one restored with `pending` calls), journaling the
 * turn when the options name a journal or a store.
 */
export async function driveModelLoop<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
  state: ModelLoopState<F>,
  control?: PendingControl,
  streaming = false,
): Promise<ModelLoopResult<F>> {
  const journal = LoopJournal.of(options)
  // The turn this run's replies belong to: the journal's, or one of its own when nothing journals it.
  const turnId = journal?.turnId ?? `turn-${globalThis.crypto.randomUUID()}`
  if (journal === undefined) return loop(options, state, control, streaming, turnId)
  journal.turnStarted(options.model.format, state.messages, state.pending !== undefined)
  const observer = options.onEvent
  const observed: RunModelLoopOptions<F> = {
    ...options,
    onEvent: (event) => {
      try {
        journal.observe(event)
      } catch {
        // Journaling never breaks the loop; the caller's observer still hears the event.
      }
      observer?.(event)
    },
  }
  try {
    const result = await loop(observed, state, control, streaming, turnId)
    journal.turnEnded(result.stopReason, result.usage)
    return result
  } catch (error) {
    journal.turnEnded('error', sumUsage(state.steps.map((step) => step.usage)))
    throw error
  } finally {
    await journal.flush()
  }
}

async function loop<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
  state: ModelLoopState<F>,
  control: PendingControl | undefined,
  streaming: boolean,
  turnId: string,
): Promise<ModelLoopResult<F>> {
  const { model, signal } = options
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS
  const finish = (stopReason: ModelLoopStopReason): ModelLoopResult<F> => ({
    messages: state.messages,
    steps: state.steps,
    stopReason,
    usage: sumUsage(state.steps.map((step) => step.usage)),
  })
  const endStep = (entry: ModelLoopStep<F>) => {
    state.steps.push(entry)
    emit(options, { type: 'step-end', step: state.steps.length - 1, ...(entry.usage ? { usage: entry.usage } : {}) })
  }
  for (;;) {
    if (state.pending !== undefined) {
      const { reply, calls, usage } = state.pending
      const step = state.steps.length
      const settled = await settlePending(options, state.pending, step, control)
      control = undefined // decisions answer only the batch they were given for
      if (settled.waiting !== undefined) {
        state.pending = settled.waiting
        return suspended(options, state)
      }
      const { results, concludesTurn } = settled
      state.messages.push(...toResultMessages(model.format, results))
      endStep({ reply, calls, results, ...(usage !== undefined ? { usage } : {}) })
      state.pending = undefined
      if (signal?.aborted) return finish('aborted')
      if (concludesTurn) return finish('concluded')
    }
    if (signal?.aborted) return finish('aborted')
    if (state.steps.length >= maxSteps) return finish('max-steps')
    const step = state.steps.length
    const messages = state.messages
    emit(options, { type: 'model-request', step, messages })
    let reply: ModelReply<F>
    try {
      const deferred = deferredOf(options.tools, options.agent)
      const request = {
        messages: [...messages],
        tools: options.tools.schemas(options.agent),
        ...(deferred.length > 0 ? { deferred } : {}),
        signal,
      }
      reply =
        streaming && typeof model.stream === 'function'
          ? await model.stream(request, (delta) => emit(options, { ...delta, step }))
          : await model.generate(request)
    } catch (error) {
      if (signal?.aborted) return finish('aborted')
      throw new ModelLoopError(
        `runModelLoop: the model request of step ${step} failed: ${error instanceof Error ? error.message : String(error)}`,
        state as ModelLoopState,
        error,
      )
    }
    const calls = Array.isArray(reply?.calls) ? reply.calls : []
    const replyMessages = Array.isArray(reply?.messages) ? reply.messages : []
    const usage = checkedUsage(reply?.usage)
    emit(options, { type: 'model-response', step, messages: replyMessages, calls })
    state.messages.push(...replyMessages)
    if (calls.length === 0) {
      endStep({ reply: replyMessages, calls, results: [], ...(usage !== undefined ? { usage } : {}) })
      return finish('done')
    }
    state.pending = { reply: replyMessages, calls, ...(usage !== undefined ? { usage } : {}), turnId }
  }
}

/**
 * Run what a pending batch still needs: calls that never ran, and suspended calls that now have a
 * decision. Completed results are kept (never run again); a suspended call without a decision stays
 * suspended. `waiting` is set while any call still waits.
 */
async function settlePending<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
  pending: ModelLoopPending<F>,
  step: number,
  control: PendingControl | undefined,
): Promise<{ results: ModelLoopCallResult[]; concludesTurn: boolean; waiting?: ModelLoopPending<F> }> {
  const { calls } = pending
  const results: (ModelLoopCallResult | null)[] = calls.map((_, i) => pending.results?.[i] ?? null)
  const requests: (ApprovalRequest | null)[] = calls.map((_, i) => pending.requests?.[i] ?? null)
  const programs: (ProgramSuspension | null)[] = calls.map((_, i) => pending.programs?.[i] ?? null)
  // A paused program runs again once any of its waiting sub-calls has a decision.
  const programDecisions = (i: number): Record<string, ApprovalOutcome> | undefined => {
    const program = programs[i]
    if (program === null) return undefined
    const decided: Record<string, ApprovalOutcome> = {}
    for (const request of program.waiting) {
      const decision = control?.decisions.get(request.callId)
      if (decision !== undefined) decided[request.callId] = decision
    }
    return Object.keys(decided).length > 0 ? decided : undefined
  }
  const run: number[] = []
  calls.forEach((call, i) => {
    if (results[i] !== null) return
    const known = requests[i] !== null && programs[i] === null ? control?.known.get(call.callId) : undefined
    if (known !== undefined) {
      results[i] = { ...callOf(call), result: known }
      requests[i] = null
    } else if (
      requests[i] === null ||
      (programs[i] === null ? control?.decisions.has(call.callId) : programDecisions(i) !== undefined)
    )
      run.push(i)
  })
  if (run.length > 0) {
    const decide = (callId: string) => control?.decisions.get(callId)
    const resumption = (k: number) => {
      const i = run[k]
      const program = programs[i]
      const decisions = programDecisions(i)
      return program === null || decisions === undefined ? undefined : { log: program.log, decisions }
    }
    const suspensions: (ApprovalRequest | undefined)[] = []
    const paused: (ProgramSuspension | undefined)[] = []
    const claimed =
      control?.claim === undefined ? options : { ...options, tools: claiming(options.tools, calls, control.claim) }
    // The batch's calls name the turn that emitted them (an older state's batch has none).
    const turnId = pending.turnId
    const gated =
      turnId === undefined
        ? claimed
        : {
            ...claimed,
            tools: withExecute(claimed.tools, (input, host) => claimed.tools.execute(input, { ...host, turnId })),
          }
    const batch = await executeStepCalls(
      gated,
      run.map((i) => calls[i]),
      step,
      decide,
      run,
      (k, request, program) => {
        suspensions[k] = request
        paused[k] = program
      },
      resumption,
    )
    batch.results.forEach((entry, k) => {
      const i = run[k]
      const request = suspensions[k]
      if (request !== undefined) {
        results[i] = null
        requests[i] = { ...request } // plain copy: the live objects beside it stay behind
        const program = paused[k]
        programs[i] =
          program === undefined ? null : { waiting: program.waiting.map((r) => ({ ...r })), log: program.log }
      } else {
        results[i] = entry
        requests[i] = null
        programs[i] = null
      }
    })
  }
  if (results.some((r) => r === null)) {
    const usage = pending.usage !== undefined ? { usage: pending.usage } : {}
    const withPrograms = programs.some((p) => p !== null) ? { programs } : {}
    return {
      results: [],
      concludesTurn: false,
      waiting: {
        reply: pending.reply,
        calls,
        ...usage,
        results,
        requests,
        ...withPrograms,
        ...(pending.turnId === undefined ? {} : { turnId: pending.turnId }),
      },
    }
  }
  const done = results as ModelLoopCallResult[]
  const concludesTurn = done.some(({ result }) => !result.isError && result.concludesTurn === true)
  return { results: done, concludesTurn }
}

/** `tools` as the loop reads them (its `ctx` too, for progress), with `execute` replaced. */
export function withExecute(tools: ModelLoopTools, execute: ModelLoopTools['execute']): ModelLoopTools {
  const ctx = (tools as { ctx?: unknown }).ctx
  const carried = ctx !== undefined ? { ctx } : {}
  return {
    ...carried,
    schemas: (scope) => tools.schemas(scope),
    ...(tools.deferred !== undefined && tools.get !== undefined
      ? {
          deferred: (scope?: Agent) => tools.deferred?.(scope) ?? [],
          get: (name: string, scope?: Agent) => tools.get?.(name, scope),
        }
      : {}),
    executionMode: (input) => tools.executionMode(input),
    execute,
  }
}

/** `tools` with each call of `calls` passing `claim` right before it runs. */
function claiming(tools: ModelLoopTools, calls: readonly ProviderToolCall[], claim: ClaimGate): ModelLoopTools {
  const byId = new Map(calls.map((call) => [call.callId, call]))
  return withExecute(tools, async (input, options) => {
    const call = byId.get(input.callId)
    if (call === undefined) return tools.execute(input, options)
    const gate = await claim(call)
    if (gate.skip !== undefined) return gate.skip
    // A call that suspends again gives its claim back: the next resume decides it.
    let suspended = false
    const result = await tools.execute(input, {
      ...options,
      onSuspended: (request, program) => {
        suspended = true
        options?.onSuspended?.(request, program)
      },
    })
    if (suspended) gate.release()
    return result
  })
}

/** The `'approval-required'` result: the requests that wait and the state to resume from. */
function suspended<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
  state: ModelLoopState<F>,
): ModelLoopResult<F> {
  const snapshot: ModelLoopState<F> = JSON.parse(
    JSON.stringify({
      v: 1,
      format: options.model.format,
      agentId: options.agent?.id ?? null,
      messages: state.messages,
      steps: state.steps,
      pending: state.pending,
    }),
  )
  if (options.stateKey !== undefined)
    snapshot.seal = stateSeal(
      snapshot as unknown as Record<string, unknown>,
      stateKeyBytes(options.stateKey, 'stateKey'),
    )
  // A paused program waits on each of its waiting sub-calls: each is decided on its own.
  const programs = snapshot.pending?.programs
  const pending = (snapshot.pending?.requests ?? []).flatMap((r, i): ApprovalRequest[] => {
    if (r === null) return []
    const program = programs?.[i]
    return program ? [...program.waiting] : [r]
  })
  const usage = sumUsage([...state.steps.map((step) => step.usage), state.pending?.usage])
  return {
    messages: state.messages,
    steps: state.steps,
    stopReason: 'approval-required',
    usage,
    pending,
    state: snapshot,
  }
}

/** Run one step's calls as a batch; every call ends with exactly one result, in call order. */
export async function executeStepCalls<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
  calls: readonly ProviderToolCall[],
  step: number,
  decide?: (callId: string) => ApprovalOutcome | undefined,
  positions?: readonly number[],
  onSuspended?: (index: number, request: ApprovalRequest, program?: ProgramSuspension) => void,
  resumption?: (index: number) => ProgramResumption | undefined,
): Promise<{ results: ModelLoopCallResult[]; concludesTurn: boolean }> {
  const at = (k: number) => positions?.[k] ?? k
  const { tools, agent } = options
  const own = new AbortController().signal
  const inputs: ToolExecutionInput[] = calls.map((call, k) => ({
    callId: call.callId,
    name: call.name,
    arguments: call.argumentsError === undefined ? call.arguments : new UnusableArguments(call),
    ...(agent !== undefined ? { agent } : {}),
    signal: own,
    [POSITION]: k,
  }))
  // Calls whose arguments could not be parsed never reach the pipeline: they answer INVALID_ARGS.
  const runtime: BatchToolRuntime = {
    executionMode: (input) => (input.arguments instanceof UnusableArguments ? PARALLEL : tools.executionMode(input)),
    execute: (input) => {
      if (input.arguments instanceof UnusableArguments) return Promise.resolve(input.arguments.result)
      // executeBatch hands a copy (with the batch signal fused in) when the loop has a signal; the
      // copy keeps the symbol-keyed position.
      const k = (input as { [POSITION]?: number })[POSITION] ?? inputs.indexOf(input)
      // The decision and the suspension travel beside the input, where nothing the model writes reaches.
      const decision = decide?.(input.callId)
      const program = k >= 0 ? resumption?.(k) : undefined
      return tools.execute(input, {
        ...(decision !== undefined ? { decision } : {}),
        ...(program !== undefined ? { program } : {}),
        ...(onSuspended !== undefined && k >= 0
          ? { onSuspended: (request, paused) => onSuspended(k, request, paused) }
          : {}),
      })
    },
  }
  const stopProgress = watchProgress(options, calls, step, at)
  let batch: Awaited<ReturnType<typeof executeBatch>>
  try {
    batch = await executeBatch(runtime, inputs, {
      maxParallel: options.maxParallel,
      signal: options.signal,
      onStart: (_input, index, mode) =>
        emit(options, { type: 'tool-start', step, index: at(index), call: calls[index], mode }),
      onResult: (entry) =>
        emit(options, {
          type: 'tool-result',
          step,
          index: at(entry.index),
          call: calls[entry.index],
          result: entry.result,
        }),
    })
  } finally {
    stopProgress()
  }
  const results = batch.results.map((entry) => ({ ...callOf(calls[entry.index]), result: entry.result }))
  return { results, concludesTurn: batch.concludesTurn }
}

/** The provider messages answering one step's results. */
export function toResultMessages<F extends ProviderFormat>(
  format: F,
  results: readonly ModelLoopCallResult[],
): ProviderMessage<F>[] {
  return formatModule(format, 'runModelLoop').toMessages({
    results: results.map(({ callId, name, kind, result }) => ({ call: callOf({ callId, name, kind }), result })),
  })
}

/** What identifies a call in its answer: id, name, and the custom kind when it has one. */
function callOf(call: { callId: string; name: string; kind?: 'custom' }): {
  callId: string
  name: string
  kind?: 'custom'
} {
  return call.kind === 'custom'
    ? { callId: call.callId, name: call.name, kind: 'custom' }
    : { callId: call.callId, name: call.name }
}

/** Where an input sits in its batch (object spread keeps symbol keys, so copies carry it). */
const POSITION = Symbol('position in the batch')

const PARALLEL: ToolExecutionMode = Object.freeze({ kind: 'parallel' })

/** Marks a call whose arguments could not be parsed; never JSON, so no tool could ever run on it. */
class UnusableArguments {
  readonly result: ToolExecutionFailure
  constructor(call: ProviderToolCall) {
    const message = `Invalid arguments for ${call.name}: ${call.argumentsError}`
    this.result = Object.freeze({
      isError: true,
      error: Object.freeze({ message, info: Object.freeze({ name: 'ToolArgsError', code: 'INVALID_ARGS' }) }),
      content: Object.freeze([
        Object.freeze({ type: 'text' as const, text: message }),
      ]) as ToolExecutionFailure['content'],
    })
  }
}

/** The part of a runtime's Cordis context the loop listens on for progress (absent on a bare runtime). */
interface ProgressSource {
  on(
    name: 'tools/progress',
    listener: (exec: { callId: string; rootCallId?: string; agent?: Agent }, progress: ToolProgress) => void,
  ): () => unknown
}

/**
 * Report the progress of this batch's calls (and of calls nested in them) as `tool-progress`
 * events while the batch runs. Only with an `onEvent` observer and a runtime that has a context.
 */
function watchProgress<F extends ProviderFormat>(
  options: RunModelLoopOptions<F>,
  calls: readonly ProviderToolCall[],
  step: number,
  at: (k: number) => number,
): () => void {
  if (options.onEvent === undefined) return () => {}
  const source = (options.tools as { ctx?: Partial<ProgressSource> }).ctx
  if (typeof source?.on !== 'function') return () => {}
  const byId = new Map(calls.map((call, k) => [call.callId, k]))
  const agentId = options.agent?.id
  let dispose: (() => unknown) | undefined
  try {
    dispose = source.on('tools/progress', (exec, progress) => {
      // Another loop may use the same call ids: the agent tells them apart.
      if (exec.agent?.id !== agentId) return
      const k = byId.get(exec.rootCallId ?? exec.callId)
      if (k === undefined) return
      emit(options, { type: 'tool-progress', step, index: at(k), call: calls[k], progress })
    })
  } catch {
    return () => {}
  }
  return () => {
    try {
      dispose?.()
    } catch {
      // A context already disposed has dropped its listeners.
    }
  }
}

/** The deferred tools' schemas for a request, when the runtime tells them (a bare test double may not). */
export function deferredOf(tools: ModelLoopTools, agent: Agent | undefined): ToolSchema[] {
  if (typeof tools.deferred !== 'function' || typeof tools.get !== 'function') return []
  return deferredSchemas(tools as DeferredToolsSource, agent)
}

/** A reply's usage when it is well-formed (counts that are finite, non-negative numbers). */
function checkedUsage(usage: unknown): TokenUsage | undefined {
  if (usage === null || typeof usage !== 'object') return undefined
  const { inputTokens, outputTokens, totalTokens } = usage as Record<string, unknown>
  const ok = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0
  if (!ok(inputTokens) || !ok(outputTokens) || !ok(totalTokens)) return undefined
  return JSON.parse(JSON.stringify(usage)) as TokenUsage
}

function emit<F extends ProviderFormat>(options: RunModelLoopOptions<F>, event: ModelLoopEvent<F>): void {
  if (options.onEvent === undefined) return
  try {
    options.onEvent(event)
  } catch {
    // A UI observer must not break the loop's one-result-per-call contract.
  }
}

/** runModelLoop's option checks (also used by resumeModelLoop). */
export function checkOptions<F extends ProviderFormat>(options: RunModelLoopOptions<F>): void {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('runModelLoop(options)', 'expected an object')
  const { tools, model, messages, maxSteps, maxParallel, signal, onEvent } = options
  if (typeof tools?.execute !== 'function' || typeof tools.schemas !== 'function')
    throw new ConfigError('runModelLoop(options).tools', 'expected ctx.tools (a ToolRuntime)')
  if (typeof model?.generate !== 'function')
    throw new ConfigError('runModelLoop(options).model', 'expected a model with generate()')
  formatModule(model.format, 'runModelLoop(options).model.format')
  if (!Array.isArray(messages)) throw new ConfigError('runModelLoop(options).messages', 'expected an array')
  if (maxSteps !== undefined && !(Number.isSafeInteger(maxSteps) && maxSteps > 0))
    throw new ConfigError('runModelLoop(options).maxSteps', `expected a positive integer, got ${String(maxSteps)}`)
  if (maxParallel !== undefined && !(Number.isSafeInteger(maxParallel) && maxParallel > 0))
    throw new ConfigError(
      'runModelLoop(options).maxParallel',
      `expected a positive integer, got ${String(maxParallel)}`,
    )
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new ConfigError('runModelLoop(options).signal', 'expected an AbortSignal')
  if (onEvent !== undefined && typeof onEvent !== 'function')
    throw new ConfigError('runModelLoop(options).onEvent', 'expected a function')
  if (options.stateKey !== undefined) stateKeyBytes(options.stateKey, 'runModelLoop(options).stateKey')
  checkLoopJournal(options, 'runModelLoop(options)')
}
