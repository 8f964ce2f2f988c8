// Turning a provider's raw tool call into a ProviderToolCall: argument parsing and strict-null undo.
import type { JsonObject, JsonValue } from '../contract/json-value.js'
import type { ToolSchema } from '../contract/tool-definition.js'
import { stripStrictNulls, toStrictSchema } from './strict-schema.js'
import type { ParseToolCallsOptions, ProviderToolCall } from './types.js'

/** Longest stretch of the model's raw argument text quoted back in an `INVALID_ARGS` message. */
const QUOTE_LIMIT = 500

/**
 * Build one call from the model's arguments: a JSON string is parsed here (malformed text is
 * kept as an `argumentsError`, never thrown or dropped); an already-parsed value is used as is.
 */
export function toolCall(
  callId: string,
  name: string,
  raw: unknown,
  nullAbsent: ReadonlyMap<string, JsonValue> | undefined,
): ProviderToolCall {
  let args: JsonValue
  if (typeof raw === 'string') {
    if (raw.trim() === '') args = {}
    else {
      try {
        args = JSON.parse(raw) as JsonValue
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        const quoted = raw.length > QUOTE_LIMIT ? `${JSON.stringify(raw.slice(0, QUOTE_LIMIT))}…` : JSON.stringify(raw)
        return { callId, name, arguments: null, argumentsError: `arguments are not valid JSON (${reason}): ${quoted}` }
      }
    }
  } else if (raw === undefined || raw === null) args = {}
  else args = raw as JsonValue
  const schema = nullAbsent?.get(name)
  if (schema !== undefined) args = stripStrictNulls(schema, args)
  return { callId, name, arguments: args }
}

const strictCache = new WeakMap<readonly ToolSchema[], ReadonlyMap<string, JsonValue>>()
const allCache = new WeakMap<readonly ToolSchema[], ReadonlyMap<string, JsonValue>>()

/**
 * Name → original parameter schema of every tool whose `null`s for optional properties mean
 * "absent": with a strict mode (OpenAI), the tools that went out strict; without one
 * (Anthropic, Gemini, whose models send such nulls on their own), every tool.
 */
export function nullAbsentSchemas(
  options: ParseToolCallsOptions | undefined,
  hasStrictMode: boolean,
): ReadonlyMap<string, JsonValue> | undefined {
  const schemas = options?.schemas
  if (schemas === undefined || (hasStrictMode && options?.strict !== true)) return undefined
  const cache = hasStrictMode ? strictCache : allCache
  let map = cache.get(schemas)
  if (map === undefined) {
    const built = new Map<string, JsonValue>()
    for (const schema of schemas) {
      if (!hasStrictMode || toStrictSchema(schema.parameters).downgrades.length === 0)
        built.set(schema.name, schema.parameters)
    }
    map = built
    cache.set(schemas, map)
  }
  return map
}

/** A plain-object view of an untrusted response member (`undefined` when it is not one). */
export function record(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined
}

/** An untrusted response member as an array (empty when it is not one). */
export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : []
}

/**
 * The argument text OpenAI's APIs take back for a call (they accept only a string of JSON): a
 * string is kept, a missing or null value becomes `{}` (what the call ran with), anything else is
 * serialized, so a server that sent an object or a number cannot make the next request invalid.
 */
export function wireArguments(raw: unknown): string {
  if (typeof raw === 'string') return raw
  if (raw === undefined || raw === null) return '{}'
  try {
    return JSON.stringify(raw) ?? '{}'
  } catch {
    return '{}'
  }
}

/** The free-text input of a custom tool call as the API takes it back (a string). */
export function wireInput(raw: unknown): string {
  return typeof raw === 'string' ? raw : raw === undefined || raw === null ? '' : wireArguments(raw)
}

/** A call of a non-function (custom) tool: kept, so it gets its answer, and refused with a reason. */
export function customCall(callId: string, name: string, type: unknown): ProviderToolCall {
  return {
    callId,
    name,
    arguments: null,
    argumentsError: `tool calls of type ${JSON.stringify(type)} are not supported; call a function tool`,
    kind: 'custom',
  }
}
