// toAiSdkTools: a Vercel AI SDK (`ai` 6) tool set whose execute runs through ctx.tools.execute.
import type { Tool, ToolSet } from 'ai'
import type { ContentBlock } from '../contract/content.js'
import type { Agent, ToolExecutionInput, ToolExecutionMode, ToolExecutionResult } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolSchema } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { cloneJsonValue } from '../json/snapshot.js'
import { CallScheduler, classifyCall, DEFAULT_MAX_PARALLEL } from '../scheduling/call-scheduler.js'

import { EMPTY_RESULT, imagePlaceholder, isPortableImage, joinText, modelBlocks } from './result-content.js'

/** The part of `ctx.tools` the tool set uses. */
export interface AiSdkToolsRuntime {
  schemas(scope?: Agent): ToolSchema[]
  execute(input: ToolExecutionInput): Promise<ToolExecutionResult>
  /**
   * How a call may be scheduled (`ctx.tools` has it). Without it every call counts as not
   * concurrency-safe and runs alone.
   */
  executionMode?(input: ToolExecutionInput): ToolExecutionMode
}

export interface AiSdkToolsOptions {
  /** The agent the calls run for (its scope decides which tools exist). */
  readonly agent?: Agent
  /** Upper bound of overlapping concurrency-safe calls (a positive integer). Default 8, as `executeBatch`. */
  readonly maxParallel?: number
}

type ToolOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>
type ContentPart = Extract<ToolOutput, { type: 'content' }>['value'][number]

/**
 * A tool set for `generateText` / `streamText` with the tools `tools.schemas(agent)` shows now.
 * Each `execute` is one `tools.execute` call (call id = the AI SDK's toolCallId, cancellation =
 * its abortSignal), so every toolgate policy — approval, guards, timeouts — applies. `execute`
 * returns the toolgate result; `toModelOutput` turns it into what the model reads (a denial as
 * `execution-denied`, other failures as `error-text`, images as image parts).
 */
export function toAiSdkTools(tools: AiSdkToolsRuntime, options: AiSdkToolsOptions = {}): ToolSet {
  if (typeof tools?.schemas !== 'function' || typeof tools.execute !== 'function')
    throw new ConfigError('toAiSdkTools(tools)', 'expected ctx.tools (a ToolRuntime)')
  if (options === null || typeof options !== 'object')
    throw new ConfigError('toAiSdkTools(tools, options)', 'expected an object')
  const { agent } = options
  const maxParallel = options.maxParallel ?? DEFAULT_MAX_PARALLEL
  if (!(Number.isSafeInteger(maxParallel) && maxParallel > 0))
    throw new ConfigError(
      'toAiSdkTools(tools, options).maxParallel',
      `expected a positive integer, got ${String(maxParallel)}`,
    )
  // The AI SDK starts every call of a step at once, in call order. Queueing them here keeps
  // toolgate's one scheduling rule: a call that is not concurrency-safe waits for every earlier
  // call and holds back every later one; safe calls between such barriers overlap.
  const scheduler = new CallScheduler({ maxParallel })
  const executionMode = tools.executionMode?.bind(tools) ?? (() => ({ kind: 'exclusive' }) as const)
  // No prototype: a model calling `constructor` or `__proto__` must find no tool, not Object's members.
  const set: ToolSet = Object.create(null)
  for (const schema of tools.schemas(agent)) {
    const name = schema.name
    const tool: Tool<unknown, ToolExecutionResult> = {
      description: schema.description,
      inputSchema: jsonInputSchema(schema.parameters),
      execute: (input, { toolCallId, abortSignal }) => {
        const call: ToolExecutionInput = {
          callId: toolCallId,
          name,
          arguments: input,
          ...(agent !== undefined ? { agent } : {}),
          signal: abortSignal ?? new AbortController().signal,
        }
        return new Promise<ToolExecutionResult>((resolve, reject) => {
          scheduler.submit(classifyCall(executionMode, call), () => {
            let running: Promise<ToolExecutionResult>
            try {
              running = tools.execute(call)
            } catch (error) {
              running = Promise.reject(error)
            }
            running.then(resolve, reject)
            return running
          })
        })
      },
      toModelOutput: ({ output }) => modelOutput(output),
    }
    Object.defineProperty(set, name, { value: tool, enumerable: true, writable: true, configurable: true })
  }
  return set
}

/**
 * The parameters as a Standard Schema with a JSON Schema view, which `ai` accepts without being
 * imported here. Validation passes everything through: the toolgate pipeline validates (and
 * answers INVALID_ARGS), so a bad call still reaches the policies and the model sees why.
 */
function jsonInputSchema(parameters: JsonValue): Tool<unknown, ToolExecutionResult>['inputSchema'] {
  return {
    '~standard': {
      version: 1,
      vendor: 'toolgate',
      validate: (value: unknown) => ({ value }),
      // The AI SDK edits the schema it gets (it closes objects), so each call gets its own copy.
      jsonSchema: {
        input: () => cloneJsonValue(parameters) as Record<string, unknown>,
        output: () => cloneJsonValue(parameters) as Record<string, unknown>,
      },
    },
  } as Tool<unknown, ToolExecutionResult>['inputSchema']
}

function modelOutput(result: ToolExecutionResult): ToolOutput {
  const text = (content: readonly ContentBlock[]) => joinText(content, (block) => imagePlaceholder(block))
  // Deferred user messages have no slot of their own in the AI SDK: they ride after the result.
  const content = modelBlocks([
    ...result.content,
    ...(result.additionalContexts ?? []).flatMap((message) => message.content),
  ])
  if (result.isError) {
    if (result.error.info?.code === 'TOOL_DENIED') return { type: 'execution-denied', reason: result.error.message }
    return { type: 'error-text', value: text(content) }
  }
  if (!content.some((block) => block.type === 'image' && isPortableImage(block)))
    return { type: 'text', value: text(content) }
  const parts: ContentPart[] = content.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : isPortableImage(block)
        ? { type: 'image-data', data: block.data, mediaType: block.mediaType }
        : { type: 'text', text: imagePlaceholder(block) },
  )
  return { type: 'content', value: parts.length > 0 ? parts : [{ type: 'text', text: EMPTY_RESULT }] }
}
