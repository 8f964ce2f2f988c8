import type { ContentBlock, ImageContentBlock, UserMessage } from '../contract/content.js'
import type {
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
import { ToolAbortedError } from '../runtime/index.js'
import { CallScheduler, classifyCall, DEFAULT_MAX_PARALLEL } from '../scheduling/call-scheduler.js'
import { ToolArgsError } from '../schema/errors.js'
import { getJsonSchemaValidator } from '../schema/validator.js'
import { isRecord } from '../util/is-record.js'
import type { CodeBindingCall, CodeBindingOutcome, CodeRunOutcome, CodeRuntime } from './code-runtime.js'
import { RUN_CODE_NAME, SEARCH_BINDING } from './constants.js'
import { CodeRunFailedError, CodeTypeError } from './errors.js'
import type { CodeDispatchLog } from './events.js'
import { type CodeTypeCheckMode, formatDiagnostics, sharedProgramChecker } from './program-checker.js'
import { createQuickJsRuntime } from './quickjs-runtime.js'
import { renderToolsSdk, type SdkToolEntry } from './sdk.js'
import { type CodeRuntimeSelection, selectCodeRuntime } from './select-runtime.js'
import { MAX_DIAGNOSTICS } from './type-check-protocol.js'

/**
 * What the `run_code` bridge needs from the registry. Written as an interface so the bridge is
 * testable with a fake; the registry implements it over its own pipeline.
 */
export interface CodeModeHost {
  /** The full pipeline for one sub-dispatch (never rejects). */
  execute(input: ToolExecutionInput): Promise<ToolExecutionResult>
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
  'as the result. There is no file system, network, process or timer access.'

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
      let diagnostics: string[] | undefined
      if (typeCheck !== 'off' && host.checkedSdk !== undefined) {
        const check = await sharedProgramChecker().check(host.checkedSdk(exec.agent), code, exec.signal)
        if (check !== undefined && check.diagnostics.length > 0) {
          diagnostics = formatDiagnostics(check.diagnostics, MAX_DIAGNOSTICS)
          // Before any sub-call: a refused program has no side effect to undo.
          if (typeCheck === 'refuse') throw new CodeTypeError(diagnostics, check.typescript)
        }
      }
      defaultRuntime ??= createQuickJsRuntime()
      const value: RunCodeValue = await runProgram(host, runtime ?? defaultRuntime, maxParallel, code, exec)
      return (diagnostics === undefined ? value : { ...value, diagnostics }) as unknown as JsonValue
    },
  }
}

async function runProgram(
  host: CodeModeHost,
  runtime: CodeRuntime,
  maxParallel: number,
  code: string,
  exec: ToolRunContext,
): Promise<RunCodeValue> {
  const run = new AbortController()
  const onOuterAbort = () => run.abort(exec.signal.reason)
  if (exec.signal.aborted) onOuterAbort()
  else exec.signal.addEventListener('abort', onOuterAbort, { once: true })
  const dispatcher = new SubCallDispatcher(host, exec, run.signal, maxParallel)
  let outcome: CodeRunOutcome
  try {
    outcome = await runtime.run({ code, signal: run.signal, callTool: (call) => dispatcher.call(call) })
  } catch (error) {
    // A CodeRuntime must not reject; treat one that does as an internal failure of the run.
    outcome = {
      ok: false,
      reason: 'internal',
      message: error instanceof Error ? error.message : String(error),
      logs: [],
    }
  } finally {
    if (!run.signal.aborted) run.abort(new DOMException('the run_code program settled', 'AbortError'))
    exec.signal.removeEventListener('abort', onOuterAbort)
    await dispatcher.drain()
    dispatcher.deferContexts()
  }
  if (!outcome.ok) {
    if (outcome.reason === 'aborted' || exec.signal.aborted) throw new ToolAbortedError(RUN_CODE_NAME)
    throw new CodeRunFailedError(outcome.reason, outcome.message, outcome.logs)
  }
  if (dispatcher.concluded) exec.concludeTurn()
  return { result: outcome.value, logs: [...outcome.logs] }
}

interface SubCallJob {
  readonly index: number
  readonly input: ToolExecutionInput
  readonly resolve: (outcome: CodeBindingOutcome) => void
}

/**
 * Dispatches, logs and collects the sub-calls of one run. Their order and overlap are the shared
 * CallScheduler's, the same rule `executeBatch` applies to a model turn.
 */
class SubCallDispatcher {
  concluded = false
  private count = 0
  private readonly scheduler: CallScheduler
  private readonly contexts = new Map<number, UserMessage[]>()

  constructor(
    private readonly host: CodeModeHost,
    private readonly exec: ToolRunContext,
    private readonly signal: AbortSignal,
    maxParallel: number,
  ) {
    // Sub-calls arrive from inside the sandbox's synchronous slice: start them from a microtask.
    this.scheduler = new CallScheduler({ maxParallel, deferStart: true })
  }

  call({ name, args }: CodeBindingCall): Promise<CodeBindingOutcome> {
    if (name === SEARCH_BINDING) return this.search(args)
    if (name === RUN_CODE_NAME) {
      return Promise.resolve({
        ok: false,
        toolName: name,
        message: `${RUN_CODE_NAME} cannot be called from inside a ${RUN_CODE_NAME} program; call the tools directly`,
      })
    }
    const index = ++this.count
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
    const mode = classifyCall((sub) => this.host.executionMode(sub), input)
    return new Promise((resolve) => {
      this.scheduler.submit(mode, () => this.dispatch({ index, input, resolve }))
    })
  }

  /**
   * `tools.$search(query, limit?)`: a sub-call of the finder (so policies and the journal see it
   * like any call) whose matches come back as SDK declarations the program's author can read.
   */
  private async search(args: JsonValue): Promise<CodeBindingOutcome> {
    const finder = this.host.finderName?.()
    if (finder === undefined)
      return { ok: false, toolName: SEARCH_BINDING, message: 'no tool search is installed in this runtime' }
    // `tools.$search("query")` or `tools.$search({ query, limit })`; the finder validates either.
    const outcome = await this.call({ name: finder, args: typeof args === 'string' ? { query: args } : args })
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
    const { input } = job
    let result: ToolExecutionResult
    try {
      result = await this.host.execute(input)
    } catch (error) {
      // The host contract says execute never rejects; keep the program and the drain healthy anyway.
      const message = error instanceof Error ? error.message : String(error)
      result = { isError: true, error: { message }, content: [{ type: 'text', text: message }] }
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
    job.resolve(
      result.isError
        ? { ok: false, toolName: input.name, message: result.error.message }
        : { ok: true, value: result.value },
    )
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
