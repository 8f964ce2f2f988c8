// What a served scope's tool methods do, whatever the protocol era that carries them: the listing,
// a call through the pipeline, its progress and who approves its `ask`. The 2025 session server
// (server.ts) and the 2026 per-request server (server-modern.ts) both register these.

import type { Context } from 'cordis'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalService,
  ToolExecuteOptions,
  ToolExecutionResult,
} from '../../contract/execution.js'
import type { JsonValue } from '../../contract/json-value.js'
import type { ToolDefinition } from '../../contract/tool-definition.js'
import type { ToolRuntimeCore } from '../../runtime/index.js'
import { isRecord } from '../../util/is-record.js'
import { type McpContentBlock, toMcpContent } from '../protocol/content.js'
import { callTraceOf } from '../protocol/trace-context.js'
import type { AuthInfo, CallToolResult, Tool } from '../protocol/wire-types.js'
import type { McpCallKeeper } from './server.js'

/** What a call needs of a `tools/call` request's params. */
export interface CallParams {
  readonly name: string
  readonly arguments?: Record<string, unknown>
  readonly traceId?: string
  readonly traceContext?: { readonly traceparent: string; readonly tracestate?: string }
  /** `_meta["toolgate/program"]` as the client sent it: the name of a program a keeper may keep. */
  readonly programId?: unknown
}

/** The `_meta` key a client names a kept `run_code` program with (see McpKeptCall). */
export const PROGRAM_META = 'toolgate/program'

/** The tools `agent` sees, as MCP tools, for a client of `era`. */
export function listTools(tools: ToolRuntimeCore, agent: Agent | undefined, era: 'legacy' | 'modern'): Tool[] {
  const listed: Tool[] = []
  for (const schema of tools.schemas(agent)) {
    const definition = tools.get(schema.name, agent)
    if (definition?.listedFor !== undefined && !definition.listedFor(era)) continue
    listed.push(
      listedTool(schema.name, schema.description, schema.parameters, outputSchemaOf(definition), definition?.meta),
    )
  }
  return listed
}

/** One tool as it is listed: the only place its fields are put in their order. */
export function listedTool(
  name: string,
  description: string,
  parameters: JsonValue,
  outputSchema: Record<string, unknown> | undefined,
  meta: ToolDefinition['meta'],
): Tool {
  const tool: Tool = { name, description, inputSchema: inputSchemaOf(parameters) }
  if (outputSchema) tool.outputSchema = outputSchema as Tool['outputSchema']
  if (meta === undefined) return tool
  if (meta.annotations) tool.annotations = meta.annotations
  if (meta.title !== undefined) tool.title = meta.title
  if (meta.icons) tool.icons = meta.icons as unknown as Tool['icons']
  if (meta.execution) tool.execution = meta.execution as Tool['execution']
  if (meta._meta) tool._meta = meta._meta
  // A task-only upstream tool is also called plainly here (the gateway follows the task), and
  // any call may come as a task, so tools that run as tasks upstream are announced as optional.
  const taskSupport = meta.imported && meta.execution?.taskSupport
  if (taskSupport === 'optional' || taskSupport === 'required')
    tool.execution = { ...meta.execution, taskSupport: 'optional' }
  return tool
}

/** The output schema a tool is listed with (an imported tool's own; else an object-rooted one). */
export function outputSchemaOf(definition: ToolDefinition | undefined): Record<string, unknown> | undefined {
  const imported = definition?.meta?.imported
  return imported ? imported.outputSchema : objectSchemaOf(definition?.output.schema)
}

/**
 * One call through `tools.execute` (approvals, guards, timeouts, the journal) as `agent`, its
 * result as MCP's. `execute` and `get` are the service's methods read once (see createMcpServer).
 */
export async function runToolCall(
  tools: ToolRuntimeCore,
  methods: Pick<ToolRuntimeCore, 'execute' | 'get'>,
  params: CallParams,
  callId: string,
  signal: AbortSignal,
  agent: Agent | undefined,
  approval: ApprovalService | undefined,
  keeper?: McpCallKeeper,
  authInfo?: AuthInfo,
): Promise<CallToolResult> {
  const { name, traceId, traceContext } = params
  const input = { callId, name, arguments: params.arguments ?? {}, agent, signal }
  const options = {
    approval,
    ...(traceId === undefined ? {} : { traceId }),
    ...(traceContext === undefined ? {} : { traceContext }),
  }
  const dispatch = (chosen: ToolExecuteOptions, signal?: AbortSignal) =>
    methods.execute.call(tools, signal === undefined ? input : { ...input, signal }, chosen)
  // A kept call (see CreateMcpServerOptions.keeper) runs through its keeper, which may pause it.
  const result =
    keeper === undefined
      ? await dispatch(options)
      : await keeper.run(input, options, dispatch, {
          ...(authInfo === undefined ? {} : { authInfo }),
          ...(params.programId === undefined ? {} : { programId: params.programId }),
        })
  return toCallToolResult(result, methods.get.call(tools, name, agent))
}

/** What a call needs of a `tools/call` request's params: never a `traceId` the client put there itself. */
export function callParams(params: { name: string; arguments?: Record<string, unknown>; _meta?: unknown }): CallParams {
  const trace = callTraceOf(params._meta)
  const programId = isRecord(params._meta) ? params._meta[PROGRAM_META] : undefined
  return {
    name: params.name,
    ...(params.arguments === undefined ? {} : { arguments: params.arguments }),
    ...trace,
    ...(programId === undefined ? {} : { programId }),
  }
}

/** A progress notification to the client that asked for it. */
export type SendProgress = (notification: {
  method: 'notifications/progress'
  params: { progressToken: string | number; progress: number; total?: number; message?: string }
}) => Promise<void>

/** A call's progress (its own or a Code Mode sub-call's) to the client that asked for it. */
export class CallProgress {
  private readonly targets = new Map<string, { token: string | number; step: number; send: SendProgress }>()
  private readonly dispose: () => void

  constructor(ctx: Context) {
    this.dispose = ctx.on('tools/progress', (exec, progress) => {
      const target = this.targets.get(exec.rootCallId)
      if (target === undefined) return
      // MCP progress must increase: the fraction as a percentage when given (never going back), else a count.
      const percent = progress.fraction === undefined ? undefined : Math.round(progress.fraction * 100)
      target.step = percent !== undefined && percent > target.step ? percent : target.step + 1
      target
        .send({
          method: 'notifications/progress',
          params: {
            progressToken: target.token,
            progress: target.step,
            ...(percent !== undefined && target.step <= 100 ? { total: 100 } : {}),
            ...(progress.message !== undefined ? { message: progress.message } : {}),
          },
        })
        .catch(() => {})
    })
  }

  start(callId: string, token: string | number, send: SendProgress): void {
    this.targets.set(callId, { token, step: 0, send })
  }

  end(callId: string): void {
    this.targets.delete(callId)
  }

  close(): void {
    this.dispose()
    this.targets.clear()
  }
}

/**
 * A context's `get`, taken from it once: reaching `get` through Cordis's context proxy costs many
 * times the lookup itself, and every call asks whether the host has an approval service.
 */
const lookups = new WeakMap<Context, Context['get']>()
function serviceLookup(ctx: Context): Context['get'] {
  let get = lookups.get(ctx)
  if (get === undefined) {
    get = ctx.get
    lookups.set(ctx, get)
  }
  return get
}

/** Whether the host decides approvals itself (its own approval service), so no client is asked. */
export function hostApproves(ctx: Context, agent: Agent | undefined): boolean {
  return serviceLookup(agent?.ctx ?? ctx)('approval', false) !== undefined
}

/** An approval service that denies, saying why the client cannot be asked. */
export function cannotAsk(reason: string): ApprovalService {
  return Object.freeze({ request: async (): Promise<ApprovalOutcome> => ({ kind: 'denied', reason }) })
}

/** MCP requires an object-rooted input schema; a raw registration's other roots are wrapped as "any object". */
function inputSchemaOf(parameters: JsonValue): Tool['inputSchema'] {
  const schema = objectSchemaOf(parameters)
  return (schema ?? { type: 'object' }) as Tool['inputSchema']
}

function objectSchemaOf(schema: unknown): Record<string, unknown> | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined
  return (schema as { type?: unknown }).type === 'object' ? (schema as Record<string, unknown>) : undefined
}

export function toCallToolResult(result: ToolExecutionResult, definition: ToolDefinition | undefined): CallToolResult {
  const content: McpContentBlock[] = result.content.map(toMcpContent)
  // Deferred contexts are for the model's next turn; over MCP the client's model reads them here.
  for (const context of result.additionalContexts ?? [])
    for (const block of context.content) content.push(toMcpContent(block))
  const imported = definition?.meta?.imported !== undefined
  if (result.isError) {
    const failed: CallToolResult = { isError: true, content: content as CallToolResult['content'] }
    // An imported tool's own failure goes back as the server sent it: its content already says
    // everything, and a gateway adds nothing to what it relays.
    if (!(imported && result.error.info?.code === 'MCP_TOOL_ERROR'))
      failed._meta = { 'toolgate/error': result.error as unknown as JsonValue }
    return failed
  }
  const out: CallToolResult = { content: content as CallToolResult['content'] }
  const value = result.value
  if (imported) {
    const { structuredContent, _meta } = (value ?? {}) as { structuredContent?: unknown; _meta?: unknown }
    if (isRecord(structuredContent)) out.structuredContent = structuredContent
    if (isRecord(_meta)) out._meta = _meta
  } else if (objectSchemaOf(definition?.output.schema) && isRecord(value)) {
    out.structuredContent = value
  }
  return out
}
