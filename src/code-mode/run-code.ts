import type { ContentBlock, ImageContentBlock, UserMessage } from '../contract/content.js'
import type {
  ApprovalOutcome,
  ApprovalRequest,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolRunContext,
} from '../contract/execution.js'
import type { JsonSchemaNode, ObjectJsonSchema } from '../contract/json-schema.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolCallView } from '../contract/views.js'
import { ConfigError } from '../errors/config-error.js'
import { type CallPausing, ToolAbortedError, ToolSuspendedError } from '../runtime/index.js'
import { CallScheduler, classifyCall, DEFAULT_MAX_PARALLEL } from '../scheduling/call-scheduler.js'
import { ToolArgsError } from '../schema/errors.js'
import { getJsonSchemaValidator } from '../schema/validator.js'
import { isRecord } from '../util/is-record.js'
import type { CodeBindingCall, CodeBindingOutcome, CodeRunOutcome, CodeRuntime } from './code-runtime.js'
import { RUN_CODE_NAME, SEARCH_BINDING } from './constants.js'
import { CodeReplayDivergedError, CodeRunFailedError, CodeTypeError } from './errors.js'
import type { CodeDispatchLog } from './events.js'
import { MAX_RECORDED_DRAWS } from './prelude.js'
import { type CodeTypeCheckMode, formatDiagnostics, sharedProgramChecker } from './program-checker.js'
import { createQuickJsRuntime } from './quickjs-runtime.js'
import { programDigest, type ReplayEntry, type ReplayLog, replayLogIssues } from './replay-log.js'
import { renderToolsSdk, type SdkToolEntry } from './sdk.js'
import { type CodeRuntimeSelection, selectCodeRuntime } from './select-runtime.js'
import { MAX_DIAGNOSTICS } from './type-check-protocol.js'

/**
 * What the `run_code` bridge needs from the registry. Written as an interface so the bridge is
 * testable with a fake; the registry implements it over its own pipeline.
 */
export interface CodeModeHost {
  /** The full pipeline for one sub-dispatch (never rejects); `options` as for `tools.execute`. */
  execute(input: ToolExecutionInput, options?: ToolExecuteOptions): Promise<ToolExecutionResult>
  /** Scheduling mode of one sub-dispatch as the calling scope sees it (fail closed to exclusive). */
  executionMode(input: ToolExecutionInput): ToolExecutionMode
  /** Runs the tools/code-dispatch-log waterfall and emits the durable record; never throws. */
  logDispatch(log: CodeDispatchLog): Promise<void>
  /** The installed finder tool's name (a tool search), which `tools.$search(query)` calls; none: no `$search`. */
  finderName?(): string | undefined
  /**
   * The SDK declarations a program of `agent` is type-checked against: the SDK its model sees,
   * with its deferred tools (callable, not declared) and `$search` declared loosely. Without it
   * programs are not checked.
   */
  checkedSdk?(agent: ToolExecutionInput['agent']): string
  /**
   * Whether the host of this `run_code` call keeps suspended calls (a model loop): then a sub-call
   * whose approval suspends pauses the whole program, and a resume hands its replay log back.
   */
  pausing?(exec: ToolRunContext): CallPausing | undefined
}

export interface CodeModeOptions extends CodeRuntimeSelection {
  /** Concurrency-safe sub-calls that may overlap. Default 8, the same default as `executeBatch`. */
  readonly maxParallelSubCalls?: number
  /** Model-facing description of `run_code` (the registry may append the SDK). */
  readonly description?: string
  /**
   * Type-check each program against its agent's SDK before it runs (TypeScript, strict): `'refuse'`
   * fails the call with `CODE_TYPE_ERROR` before anything of it runs, `'warn'` runs it and
   * returns the diagnostics beside the result, `'off'` (default for now) skips the check. Without the optional
   * `typescript` package the check is off, reported once as a process warning.
   */
  readonly typeCheck?: CodeTypeCheckMode
}

/** Arguments of `run_code`. */
export interface RunCodeArgs {
  readonly code: string
  readonly description: string
}

/** Canonical value of a `run_code` success. */
export interface RunCodeValue {
  /** The program's return value (`undefined` → `null`). */
  readonly result: JsonValue
  /** Captured `console.*` lines, in order (capped). */
  readonly logs: string[]
  /** With `typeCheck: 'warn'`, the program's type errors (`line:column: message`); absent when none. */
  readonly diagnostics?: string[]
}

export const RUN_CODE_DESCRIPTION =
  'Run a TypeScript program in a sandbox. The program is the body of an async function: top-level ' +
  'await and return work. Call tools as `await tools.<name>(args)` (see the SDK declarations); ' +
  'independent calls can run concurrently with Promise.all. A failed call rejects with a ' +
  'ToolCallError { toolName, message }. console.log output and the returned JSON value come back ' +
  'as the result. There is no file system, network, process or timer access. The program may be ' +
  'type-checked against the SDK before it runs: then a type error refuses it, nothing of it runs, and ' +
  'the errors come back as `line:column: message` on your own lines; fix them and call again. A call ' +
  "that needs a person's approval may pause the program until they decide; it then resumes where it " +
  'was, so do not repeat finished calls yourself.'

/** Model-facing parameters of `run_code`. */
export const RUN_CODE_PARAMETERS: ObjectJsonSchema = Object.freeze({
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description:
        'The body of an async TypeScript function; top-level await and return work. Call tools as tools.<name>(args).',
    },
    description: {
      type: 'string',
      description: 'A five-to-ten-word summary of what this program does, shown in the UI.',
    },
  },
  required: ['code', 'description'],
  additionalProperties: false,
}) as ObjectJsonSchema

/**
 * Output schema of `run_code`: `result` is any JSON value (the program's return value,
 * `undefined` → `null`), `logs` the captured console lines.
 */
export const RUN_CODE_OUTPUT_SCHEMA: JsonSchemaNode = Object.freeze({
  type: 'object',
  properties: {
    result: { description: "The program's return value (undefined becomes null)." },
    logs: { type: 'array', items: { type: 'string' }, description: 'Captured console output, one entry per call.' },
    diagnostics: {
      type: 'array',
      items: { type: 'string' },
      description: "The program's type errors against the SDK (line:column: message), when it ran despite them.",
    },
  },
  required: ['result', 'logs'],
  additionalProperties: false,
}) as JsonSchemaNode

let defaultRuntime: CodeRuntime | undefined

function validateRunCodeArgs(args: unknown): RunCodeArgs {
  const validator = getJsonSchemaValidator(RUN_CODE_PARAMETERS)
  if (!validator.isValid(args)) throw new ToolArgsError(validator.violations(args, 'args'), RUN_CODE_NAME)
  return args as RunCodeArgs
}

/** Model-facing content of a `run_code` success: the logs (when any), then the JSON result. */
export function renderRunCodeContent(value: JsonValue): ContentBlock[] {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}
  const logs = Array.isArray(record.logs) ? record.logs.filter((line): line is string => typeof line === 'string') : []
  const result = record.result === undefined ? null : record.result
  const diagnostics = Array.isArray(record.diagnostics)
    ? record.diagnostics.filter((line): line is string => typeof line === 'string')
    : []
  const parts: string[] = []
  if (diagnostics.length > 0) parts.push(`Type errors (the program ran anyway):\n${diagnostics.join('\n')}`)
  if (logs.length > 0) parts.push(`Logs:\n${logs.join('\n')}`)
  parts.push(`Result:\n${JSON.stringify(result, null, 2)}`)
  return [{ type: 'text', text: parts.join('\n\n') }]
}

function presentRunCodeCall(args: unknown): ToolCallView | undefined {
  if (typeof args !== 'object' || args === null) return undefined
  const { description, code } = args as { description?: unknown; code?: unknown }
  const title = typeof description === 'string' && description.trim() !== '' ? description.trim() : 'Run code'
  if (typeof code !== 'string') return { card: 'generic', title, kind: 'execute' }
  return { card: 'generic', title, kind: 'execute', content: [{ type: 'text', text: code }] }
}

/**
 * The `run_code` transport definition (R-CODE). Each binding call becomes a sub-dispatch through
 * `host.execute` with id `<callId>:code:<n>` (n from 1 in call order), the outer token as
 * `parent`, the same agent and root call id, and a per-run signal fused with the outer one.
 * Concurrency-safe sub-calls overlap up to `maxParallelSubCalls`; an exclusive sub-call waits
 * for in-flight ones, runs alone, and holds back later ones. Settlement of the run aborts the
 * per-run signal and drains every outstanding sub-dispatch before `execute` settles.
 *
 * Sub-call `additionalContexts` (of any outcome) and image blocks of successful sub-calls are
 * deferred through the outer result in sub-call order; `concludesTurn` of a nested success is
 * forwarded with `exec.concludeTurn()` when the program itself succeeds.
 */
export function createRunCodeDefinition(host: CodeModeHost, options?: CodeModeOptions): ToolDefinition {
  const maxParallel = options?.maxParallelSubCalls ?? DEFAULT_MAX_PARALLEL
  if (!Number.isInteger(maxParallel) || maxParallel < 1) {
    throw new ConfigError(
      'createRunCodeDefinition(options).maxParallelSubCalls',
      `expected a positive integer, got ${String(maxParallel)}`,
    )
  }
  const typeCheck = options?.typeCheck ?? 'off'
  if (typeCheck !== 'refuse' && typeCheck !== 'warn' && typeCheck !== 'off')
    throw new ConfigError(
      'createRunCodeDefinition(options).typeCheck',
      `expected 'refuse', 'warn' or 'off', got ${JSON.stringify(typeCheck)}`,
    )
  // The checker's thread starts and warms now, so the first program does not pay for loading TypeScript.
  if (typeCheck !== 'off' && host.checkedSdk !== undefined) sharedProgramChecker().warm()
  // Without a runtime, the bare definition shares one in-thread runtime: it has no lifetime to
  // tie a worker pool to. The Code Mode plugin defaults to (and disposes) a worker pool.
  const runtime =
    options?.runtime === undefined && options?.limits === undefined && options?.poolSize === undefined
      ? undefined
      : selectCodeRuntime({ ...options, runtime: options?.runtime ?? 'inline' }, 'createRunCodeDefinition(options)')
          .runtime
  return {
    name: RUN_CODE_NAME,
    description: options?.description ?? RUN_CODE_DESCRIPTION,
    parameters: RUN_CODE_PARAMETERS as unknown as JsonValue,
    output: {
      schema: RUN_CODE_OUTPUT_SCHEMA,
      render: (_args, value) => renderRunCodeContent(value),
    },
    presentCall: presentRunCodeCall,
    execute: async (args, exec) => {
      const { code } = validateRunCodeArgs(args)
      const pausing = host.pausing?.(exec)
      const resumption = pausing?.program
      let replay: Replay | undefined
      if (resumption !== undefined) {
        const issues = replayLogIssues(
          resumption.log,
          code,
          'program.log',
          Object.keys(resumption.decisions).length > 0,
        )
        if (issues.length > 0) throw new CodeReplayDivergedError(issues.join('; '))
        replay = {
          log: resumption.log as unknown as ReplayLog,
          decisions: new Map(Object.entries(resumption.decisions)),
        }
      }
      let diagnostics: string[] | undefined
      // A resumed program was checked when it first ran; it replays as it was.
      if (typeCheck !== 'off' && host.checkedSdk !== undefined && replay === undefined) {
        const check = await sharedProgramChecker().check(host.checkedSdk(exec.agent), code, exec.signal)
        if (check !== undefined && check.diagnostics.length > 0) {
          diagnostics = formatDiagnostics(check.diagnostics, MAX_DIAGNOSTICS)
          // Before any sub-call: a refused program has no side effect to undo.
          if (typeCheck === 'refuse') throw new CodeTypeError(diagnostics, check.typescript)
        }
      }
      defaultRuntime ??= createQuickJsRuntime()
      const value: RunCodeValue = await runProgram(
        host,
        runtime ?? defaultRuntime,
        maxParallel,
        code,
        exec,
        pausing,
        replay,
      )
      return (diagnostics === undefined ? value : { ...value, diagnostics }) as unknown as JsonValue
    },
  }
}

/** A resumed program's log and the decisions for its waiting sub-calls, by sub-call id. */
interface Replay {
  readonly log: ReplayLog
  readonly decisions: ReadonlyMap<string, ApprovalOutcome>
}

async function runProgram(
  host: CodeModeHost,
  runtime: CodeRuntime,
  maxParallel: number,
  code: string,
  exec: ToolRunContext,
  pausing: CallPausing | undefined,
  replay: Replay | undefined,
): Promise<RunCodeValue> {
  const run = new AbortController()
  const onOuterAbort = () => run.abort(exec.signal.reason)
  if (exec.signal.aborted) onOuterAbort()
  else exec.signal.addEventListener('abort', onOuterAbort, { once: true })
  const stop = (why: string) => {
    if (!run.signal.aborted) run.abort(new DOMException(why, 'AbortError'))
  }
  const record = pausing?.record
  const digest = programDigest(code)
  const dispatcher = new SubCallDispatcher(
    host,
    exec,
    run.signal,
    maxParallel,
    pausing !== undefined,
    replay,
    stop,
    record === undefined
      ? undefined
      : (calls) => record({ v: 1, program: digest, calls } satisfies ReplayLog as unknown as JsonValue),
  )
  const tape = replay?.log.calls.flatMap((entry) => entry.draws)
  let outcome: CodeRunOutcome
  try {
    outcome = await runtime.run({
      code,
      signal: run.signal,
      callTool: (call) => dispatcher.call(call),
      ...(tape === undefined || tape.length === 0 ? {} : { replayTape: tape }),
    })
  } catch (error) {
    // A CodeRuntime must not reject; treat one that does as an internal failure of the run.
    outcome = {
      ok: false,
      reason: 'internal',
      message: error instanceof Error ? error.message : String(error),
      logs: [],
    }
  } finally {
    stop('the run_code program settled')
    exec.signal.removeEventListener('abort', onOuterAbort)
    await dispatcher.drain()
    dispatcher.deferContexts()
  }
  if (exec.signal.aborted) throw new ToolAbortedError(RUN_CODE_NAME)
  if (dispatcher.diverged !== undefined) throw new CodeReplayDivergedError(dispatcher.diverged)
  if (dispatcher.waiting.length > 0 && pausing !== undefined) {
    // Paused: the host keeps the log beside its state; a resume re-runs the program against it.
    const log: ReplayLog = { v: 1, program: digest, calls: dispatcher.logEntries() }
    const waiting = [...dispatcher.waiting]
    pausing.suspend(waiting[0], { waiting, log: log as unknown as JsonValue })
    const names = waiting.map((request) => `tools.${request.toolName}`).join(', ')
    throw new ToolSuspendedError(RUN_CODE_NAME, `the program paused until ${names} is decided`)
  }
  if (replay !== undefined && !dispatcher.consumed)
    throw new CodeReplayDivergedError('the program ended before it asked for every sub-call in its log')
  if (!outcome.ok) {
    if (outcome.reason === 'aborted') throw new ToolAbortedError(RUN_CODE_NAME)
    throw new CodeRunFailedError(outcome.reason, outcome.message, outcome.logs)
  }
  if (dispatcher.concluded) exec.concludeTurn()
  return { result: outcome.value, logs: [...outcome.logs] }
}

interface SubCallJob {
  readonly index: number
  readonly input: ToolExecutionInput
  readonly entry: LogEntry
  /** A decision for a waiting sub-call of a resumed program. */
  readonly decision?: ApprovalOutcome
  readonly resolve: (outcome: CodeBindingOutcome) => void
}

type LogEntry = { -readonly [K in keyof ReplayEntry]: ReplayEntry[K] }

const never = new Promise<never>(() => {})
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Dispatches, logs and collects the sub-calls of one run. Their order and overlap are the shared
 * CallScheduler's, the same rule `executeBatch` applies to a model turn.
 *
 * When the host keeps suspended calls, every sub-call is logged (with the draws before it); a
 * sub-call whose approval suspends pauses the run: nothing new starts, the sub-calls in flight
 * finish, and the run is stopped once it is quiet. A resumed run answers the logged sub-calls from
 * the log, in the order they first finished, and starts nothing live (a waiting sub-call with its
 * decision, or one the log never had) before the program asked for every logged one.
 */
class SubCallDispatcher {
  concluded = false
  /** Why the replay failed, once it did (the run is stopped and nothing new starts). */
  diverged: string | undefined
  /** Requests of the sub-calls that wait for a decision. */
  readonly waiting: ApprovalRequest[] = []
  private count = 0
  private readonly scheduler: CallScheduler
  private readonly contexts = new Map<number, UserMessage[]>()
  private readonly entries: LogEntry[] = []
  private finished = 0
  private inFlight = 0
  private pausing = false
  private overflow = false
  // Replay: logged sub-calls asked for so far, the next finished one to hand back, and what waits.
  private matched = 0
  private nextDelivery = 0
  private delivering = false
  private readonly deliveries = new Map<number, () => void>()
  private readonly heldLive: SubCallJob[] = []
  private readonly finishedInLog: number

  constructor(
    private readonly host: CodeModeHost,
    private readonly exec: ToolRunContext,
    private readonly signal: AbortSignal,
    maxParallel: number,
    private readonly durable: boolean,
    private readonly replay: Replay | undefined,
    private readonly stop: (why: string) => void,
    /** The host keeps the log as it grows: each finished sub-call is handed over before the program sees it. */
    private readonly record?: (calls: ReplayEntry[]) => Promise<void>,
  ) {
    // Sub-calls arrive from inside the sandbox's synchronous slice: start them from a microtask.
    this.scheduler = new CallScheduler({ maxParallel, deferStart: true })
    this.finishedInLog = replay?.log.calls.filter((entry) => entry.outcome !== undefined).length ?? 0
  }

  /** Every logged sub-call of the replay was asked for and answered: live sub-calls may start. */
  get consumed(): boolean {
    const log = this.replay?.log
    return log === undefined || (this.matched === log.calls.length && this.nextDelivery === this.finishedInLog)
  }

  /** The log of this run as it stands (for a pause). */
  logEntries(): ReplayEntry[] {
    return this.entries.map((entry) => ({ ...entry }))
  }

  call({ name, args, draws }: CodeBindingCall): Promise<CodeBindingOutcome> {
    if (this.diverged !== undefined) return never
    if (draws?.overflow === true) this.overflow = true
    if (draws?.mismatch === true)
      return this.diverge('the program read the clock where its log has a random number, or back')
    if (name === SEARCH_BINDING) return this.search(args, draws?.values)
    if (name === RUN_CODE_NAME) {
      return Promise.resolve({
        ok: false,
        toolName: name,
        message: `${RUN_CODE_NAME} cannot be called from inside a ${RUN_CODE_NAME} program; call the tools directly`,
      })
    }
    return this.subCall(name, args, draws?.values ?? [])
  }

  private subCall(name: string, args: JsonValue, draws: readonly number[]): Promise<CodeBindingOutcome> {
    const index = ++this.count
    const entry: LogEntry = { name, args, draws: [...draws] }
    this.entries.push(entry)
    const exec = this.exec
    const input: ToolExecutionInput = {
      callId: `${exec.callId}:code:${index}`,
      rootCallId: exec.rootCallId,
      name,
      arguments: args,
      ...(exec.agent === undefined ? {} : { agent: exec.agent }),
      parent: exec.token,
      signal: this.signal,
    }
    const logged = this.replay?.log.calls[index - 1]
    let decision: ApprovalOutcome | undefined
    if (logged !== undefined) {
      if (logged.name !== name || JSON.stringify(logged.args) !== JSON.stringify(args))
        return this.diverge(
          `sub-call ${index}: the program asked for tools.${name}(${clip(args)}) where the log has tools.${logged.name}(${clip(logged.args)})`,
        )
      if (logged.draws.length !== draws.length)
        return this.diverge(`sub-call ${index}: the program drew other clock readings or random numbers before it`)
      this.matched++
      const recorded = logged.outcome
      if (recorded !== undefined) {
        const order = logged.order ?? 0
        return new Promise((resolve) => {
          this.deliveries.set(order, () => {
            entry.outcome = recorded
            entry.order = this.finished++
            resolve(recorded)
          })
          void this.deliver()
        })
      }
      if (logged.waiting === true) decision = this.replay?.decisions.get(input.callId)
    }
    return new Promise((resolve) => {
      const job: SubCallJob = { index, input, entry, resolve, ...(decision === undefined ? {} : { decision }) }
      // Held ones go first: the log may be consumed by this very call, after earlier ones were held.
      this.heldLive.push(job)
      this.releaseHeld()
    })
  }

  /** Once every logged sub-call was asked for and answered, start the held live ones, in call order. */
  private releaseHeld(): void {
    if (this.consumed) for (const job of this.heldLive.splice(0)) this.submit(job)
  }

  /** Hand back the logged outcomes in the order they first finished, each on its own turn. */
  private async deliver(): Promise<void> {
    if (this.delivering) return
    this.delivering = true
    try {
      for (let next = this.deliveries.get(this.nextDelivery); next !== undefined; ) {
        this.deliveries.delete(this.nextDelivery)
        this.nextDelivery++
        next()
        await nextTurn()
        if (this.diverged !== undefined) return
        next = this.deliveries.get(this.nextDelivery)
      }
    } finally {
      this.delivering = false
    }
    this.releaseHeld()
  }

  private diverge(why: string): Promise<never> {
    this.diverged ??= why
    this.heldLive.length = 0
    this.stop('the run_code program diverged from its replay log')
    return never
  }

  private submit(job: SubCallJob): void {
    const mode = classifyCall((sub) => this.host.executionMode(sub), job.input)
    this.scheduler.submit(mode, () => this.dispatch(job))
  }

  /** A sub-call waits for a decision: start nothing new, and stop the run once what runs has finished. */
  private pause(): void {
    if (this.pausing) return
    this.pausing = true
    void (async () => {
      do {
        await this.scheduler.idle()
        await nextTurn()
      } while (this.inFlight > 0)
      this.stop('the run_code program paused for an approval')
    })()
  }

  /**
   * `tools.$search(query, limit?)`: a sub-call of the finder (so policies and the journal see it
   * like any call) whose matches come back as SDK declarations the program's author can read.
   */
  private async search(args: JsonValue, draws: readonly number[] | undefined): Promise<CodeBindingOutcome> {
    const finder = this.host.finderName?.()
    if (finder === undefined)
      return { ok: false, toolName: SEARCH_BINDING, message: 'no tool search is installed in this runtime' }
    // `tools.$search("query")` or `tools.$search({ query, limit })`; the finder validates either.
    const outcome = await this.subCall(finder, typeof args === 'string' ? { query: args } : args, draws ?? [])
    if (!outcome.ok) return outcome
    const found = isRecord<{ tools?: unknown }>(outcome.value) ? outcome.value.tools : undefined
    const entries: SdkToolEntry[] = []
    if (Array.isArray(found)) {
      for (const tool of found) {
        if (!isRecord<Record<string, unknown>>(tool)) continue
        const { name, description, parameters } = tool
        if (typeof name !== 'string') continue
        entries.push({
          name,
          description: typeof description === 'string' ? description : '',
          parameters: (parameters ?? {}) as JsonValue,
        })
      }
    }
    if (entries.length === 0) return { ok: true, value: 'no matching tools' }
    return { ok: true, value: renderToolsSdk(entries, { preamble: false }) }
  }

  private async dispatch(job: SubCallJob): Promise<void> {
    const { input, entry } = job
    // Paused: a sub-call asked for after the pause is logged but never started; a resume starts it.
    // One that brings its decision runs anyway: the decision is spent on this run, not kept for the next.
    if (this.diverged !== undefined || (this.pausing && job.decision === undefined)) return
    let result: ToolExecutionResult
    let suspended: ApprovalRequest | undefined
    this.inFlight++
    try {
      const options: ToolExecuteOptions | undefined = this.durable
        ? {
            onSuspended: (request) => {
              suspended = request
            },
            ...(job.decision === undefined ? {} : { decision: job.decision }),
          }
        : undefined
      result = await this.host.execute(input, options)
    } catch (error) {
      // The host contract says execute never rejects; keep the program and the drain healthy anyway.
      const message = error instanceof Error ? error.message : String(error)
      result = { isError: true, error: { message }, content: [{ type: 'text', text: message }] }
    } finally {
      this.inFlight--
    }
    if (suspended !== undefined) {
      if (!this.overflow) {
        entry.waiting = true
        this.waiting.push(suspended)
        this.pause()
        return
      }
      // Too much non-determinism to replay: the sub-call cannot wait, as when no host keeps a pause.
      const message = `approval was suspended, but this program read the clock or random numbers more than ${MAX_RECORDED_DRAWS} times, too often to be paused and replayed; it was not run`
      result = {
        isError: true,
        error: { message, info: { name: 'ToolDeniedError', code: 'TOOL_DENIED' } },
        content: [{ type: 'text', text: message }],
      }
    }
    const items: UserMessage[] = []
    if (!result.isError) {
      const images = result.content.filter((block): block is ImageContentBlock => block.type === 'image')
      if (images.length > 0) items.push({ role: 'user', content: images, source: input.callId })
      if (result.concludesTurn === true) this.concluded = true
    }
    if (result.additionalContexts !== undefined) items.push(...result.additionalContexts)
    if (items.length > 0) this.contexts.set(job.index, items)
    try {
      await this.host.logDispatch({
        exec: this.exec,
        ...(this.exec.agent === undefined ? {} : { agent: this.exec.agent }),
        subCallId: input.callId,
        name: input.name,
        isError: result.isError,
        content: result.content,
      })
    } catch {
      // logDispatch never throws by contract; a durable-log failure must not fail the program.
    }
    const outcome: CodeBindingOutcome = result.isError
      ? { ok: false, toolName: input.name, message: result.error.message }
      : { ok: true, value: result.value }
    entry.outcome = outcome
    entry.order = this.finished++
    if (this.record !== undefined) await this.record(this.logEntries())
    job.resolve(outcome)
  }

  /** Resolves once no sub-call is queued or in flight. */
  drain(): Promise<void> {
    return this.scheduler.idle()
  }

  /** Defer every collected context through the outer result, in sub-call order. */
  deferContexts(): void {
    const indices = [...this.contexts.keys()].sort((a, b) => a - b)
    for (const index of indices) for (const context of this.contexts.get(index)!) this.exec.deferContext(context)
  }
}

function clip(value: JsonValue): string {
  const text = JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}
