// toAgentsTools: OpenAI Agents JS (`@openai/agents`) function tools whose calls run through ctx.tools.execute.
import { type FunctionTool, type RunContext, tool } from '@openai/agents'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalService,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
} from '../contract/execution.js'
import type { ToolSchema } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { cloneJsonValue } from '../json/snapshot.js'
import { CallScheduler, classifyCall, DEFAULT_MAX_PARALLEL } from '../scheduling/call-scheduler.js'
import { imagePlaceholder, joinText, modelBlocks } from './result-content.js'

/** The part of `ctx.tools` the tools use. */
export interface AgentsToolsRuntime {
  schemas(scope?: Agent): ToolSchema[]
  execute(input: ToolExecutionInput, options?: ToolExecuteOptions): Promise<ToolExecutionResult>
  /** How a call may be scheduled (`ctx.tools` has it). Without it every call runs alone. */
  executionMode?(input: ToolExecutionInput): ToolExecutionMode
}

export interface AgentsToolsOptions {
  /** The agent the calls run for (its scope decides which tools exist). */
  readonly agent?: Agent
  /** Upper bound of overlapping concurrency-safe calls (a positive integer). Default 8, as `executeBatch`. */
  readonly maxParallel?: number
}

/** An approval service that parks every ask: toolgate's ask becomes the Agents SDK's interruption. */
const SUSPEND: ApprovalService = { request: async () => ({ kind: 'suspended' }) }

/**
 * Function tools for an `@openai/agents` Agent with the tools `tools.schemas(agent)` shows now.
 * Each call is one `tools.execute` call (call id = the Agents SDK's callId), so every toolgate
 * policy applies. An approval toolgate asks for is not answered by toolgate's approval service:
 * the call is suspended and the tool's `needsApproval` answers true, so the run stops with the
 * Agents SDK's interruption. The decision made there (`state.approve` / `state.reject`, also on a
 * `RunState` restored from its string) goes back to toolgate as the call's decision, and the call
 * runs exactly once. Calls that are not concurrency-safe never overlap.
 */
export function toAgentsTools(tools: AgentsToolsRuntime, options: AgentsToolsOptions = {}): FunctionTool[] {
  if (typeof tools?.schemas !== 'function' || typeof tools.execute !== 'function')
    throw new ConfigError('toAgentsTools(tools)', 'expected ctx.tools (a ToolRuntime)')
  if (options === null || typeof options !== 'object')
    throw new ConfigError('toAgentsTools(tools, options)', 'expected an object')
  const { agent } = options
  const maxParallel = options.maxParallel ?? DEFAULT_MAX_PARALLEL
  if (!(Number.isSafeInteger(maxParallel) && maxParallel > 0))
    throw new ConfigError(
      'toAgentsTools(tools, options).maxParallel',
      `expected a positive integer, got ${String(maxParallel)}`,
    )
  const scheduler = new CallScheduler({ maxParallel })
  const executionMode = tools.executionMode?.bind(tools) ?? (() => ({ kind: 'exclusive' }) as const)
  // One execution per call id: `needsApproval` starts it (it must, to learn whether toolgate asks),
  // `invoke` takes its result. A suspended execution is forgotten, so the resumed call runs anew.
  const started = new Map<string, Promise<{ result: ToolExecutionResult; suspended: boolean }>>()

  const run = (name: string, callId: string, args: unknown, decision: ApprovalOutcome | undefined) => {
    const call: ToolExecutionInput = {
      callId,
      name,
      arguments: args,
      ...(agent !== undefined ? { agent } : {}),
      signal: new AbortController().signal,
    }
    let suspended = false
    const execute: ToolExecuteOptions = {
      approval: SUSPEND,
      onSuspended: () => {
        suspended = true
      },
      ...(decision !== undefined ? { decision } : {}),
    }
    return new Promise<{ result: ToolExecutionResult; suspended: boolean }>((resolve, reject) => {
      scheduler.submit(classifyCall(executionMode, call), () => {
        let running: Promise<ToolExecutionResult>
        try {
          running = tools.execute(call, execute)
        } catch (error) {
          running = Promise.reject(error)
        }
        running.then((result) => resolve({ result, suspended }), reject)
        return running
      })
    })
  }

  /** The call's execution, started once; the Agents SDK's decision (if any) goes with it. */
  const once = (context: RunContext, name: string, callId: string, args: unknown) => {
    let entry = started.get(callId)
    if (entry === undefined) {
      const approved = context.isToolApproved({ toolName: name, callId })
      const decision: ApprovalOutcome | undefined =
        approved === true
          ? { kind: 'allowed-once', decidedBy: 'openai-agents' }
          : approved === false
            ? { kind: 'denied', reason: 'rejected in the OpenAI Agents run', decidedBy: 'openai-agents' }
            : undefined
      entry = run(name, callId, args, decision)
      started.set(callId, entry)
      entry.then(
        ({ suspended }) => {
          if (suspended) started.delete(callId)
        },
        () => started.delete(callId),
      )
    }
    return entry
  }

  return tools.schemas(agent).map((schema) => {
    const name = schema.name
    return tool({
      name,
      description: schema.description,
      parameters: cloneJsonValue(schema.parameters) as never,
      strict: false,
      needsApproval: async (context, input, callId) => {
        if (callId === undefined) return false
        const { suspended } = await once(context, name, callId, input)
        return suspended || context.isToolApproved({ toolName: name, callId }) !== undefined
      },
      execute: async (input, context, details) => {
        const callId = details?.toolCall?.callId
        if (callId === undefined || context === undefined)
          throw new Error(`toAgentsTools: the Agents SDK called ${name} without a call id`)
        const { result } = await once(context, name, callId, input)
        started.delete(callId)
        return modelText(result)
      },
    }) as FunctionTool
  })
}

/** What the model reads: the result's text (images as placeholders), deferred user messages after it. */
function modelText(result: ToolExecutionResult): string {
  const content = modelBlocks([
    ...result.content,
    ...(result.additionalContexts ?? []).flatMap((message) => message.content),
  ])
  return joinText(content, (block) => imagePlaceholder(block))
}
