// OpenAI (chat and responses) function definitions: strict projection with a per-tool fallback.
import type { JsonObject } from '../contract/json-value.js'
import type { ToolSchema } from '../contract/tool-definition.js'
import type { FormatModule } from './format-module.js'
import { toStrictSchema } from './strict-schema.js'
import { nullAbsentSchemas } from './tool-calls.js'
import { projectTools } from './tool-search.js'
import type { ProviderTool, ProviderToolCall, ToolSearchMode } from './types.js'

export interface OpenAIFunction {
  readonly name: string
  readonly description: string
  readonly parameters: JsonObject
  readonly strict: boolean
}

/**
 * Each tool strict when asked and expressible; a tool with anything strict mode cannot say is
 * sent non-strict with its original schema, and every reason is listed in `downgrades`.
 */
export function openAIFunctions(
  schemas: readonly ToolSchema[],
  strict: boolean,
): { functions: OpenAIFunction[]; downgrades: string[] } {
  const functions: OpenAIFunction[] = []
  const downgrades: string[] = []
  for (const schema of schemas) {
    const original = schema.parameters as JsonObject
    if (!strict) {
      functions.push({ name: schema.name, description: schema.description, parameters: original, strict: false })
      continue
    }
    const projected = toStrictSchema(schema.parameters, `${schema.name}.parameters`)
    if (projected.downgrades.length === 0) {
      functions.push({ name: schema.name, description: schema.description, parameters: projected.schema, strict: true })
    } else {
      downgrades.push(...projected.downgrades)
      functions.push({ name: schema.name, description: schema.description, parameters: original, strict: false })
    }
  }
  return { functions, downgrades }
}

/** {@link openAIFunctions}, each function in the wire shape of one OpenAI API. */
export function openAITools<T>(
  schemas: readonly ToolSchema[],
  strict: boolean,
  shape: (fn: OpenAIFunction) => T,
): { tools: T[]; downgrades: string[] } {
  const { functions, downgrades } = openAIFunctions(schemas, strict)
  return { tools: functions.map(shape), downgrades }
}

/**
 * The tool half of one request of an OpenAI model adapter (chat or responses): the definitions to
 * send (strict where expressible), and the parser of the reply's calls, which turns the `null`s a
 * strict model sends for optional arguments back into absent keys.
 */
export function openAIToolRound<F extends 'openai-chat' | 'openai-responses'>(
  format: FormatModule<F>,
  schemas: readonly ToolSchema[],
  strict: boolean,
  search?: { readonly name: F; readonly toolSearch: ToolSearchMode; readonly deferred?: readonly ToolSchema[] },
): { definitions: ProviderTool<F>[]; parseCalls(response: unknown): ProviderToolCall[] } {
  const projected =
    search === undefined
      ? format.toTools(schemas, strict)
      : projectTools(search.name, format, schemas, { strict, ...search }, `${search.name} model`)
  const definitions = projected.tools
  // A tool loaded by a native search was sent strict too: its nulls are undone like a listed tool's.
  const sent = projected.toolSearch === 'native' ? [...schemas, ...(search?.deferred ?? [])] : schemas
  const nullAbsent = nullAbsentSchemas({ schemas: sent, strict }, true)
  return { definitions, parseCalls: (response) => format.parseToolCalls(response, nullAbsent) }
}
