// Reading a JSON-RPC message as the MCP SDK's JSONRPCMessage schema does, with the common shapes
// (a request, a notification or a result without `_meta`, the shapes of nearly every tool call)
// recognised by hand: the schema parser costs microseconds per message, several times per call.
// Anything else, valid or not, goes to the schema, so what is accepted and what is refused stays
// exactly the schema's.
import { parseJSONRPCMessage, specTypeSchemas } from '@modelcontextprotocol/server'
import { isRecord } from '../../util/is-record.js'
import type { JSONRPCMessage } from './wire-types.js'

// Read at the first message the schema must decide: reading it at load would load the SDK with this module.
let jsonRpcMessageSchema: (typeof specTypeSchemas.JSONRPCMessage)['~standard'] | undefined

const isId = (id: unknown) => typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id))

/** Params or a result the schema would take as they are: an object with no `_meta` to check. */
const isLooseWithoutMeta = (value: unknown) => isRecord(value) && !Object.hasOwn(value, '_meta')

/**
 * True when the schema certainly accepts `value` and would return an equal copy of it; false says
 * nothing (the schema decides).
 */
function isCommonMessage(value: unknown): value is JSONRPCMessage {
  if (!isRecord(value) || value.jsonrpc !== '2.0') return false
  let keys = 0
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false
    keys++
  }
  if (typeof value.method === 'string') {
    // A request (with an id) or a notification; the schemas are strict: no other keys.
    const withId = Object.hasOwn(value, 'id')
    if (withId && !isId(value.id)) return false
    const withParams = Object.hasOwn(value, 'params')
    if (withParams && !isLooseWithoutMeta(value.params)) return false
    return keys === 2 + (withId ? 1 : 0) + (withParams ? 1 : 0)
  }
  return keys === 3 && isId(value.id) && Object.hasOwn(value, 'result') && isLooseWithoutMeta(value.result)
}

/** `value` as a JSON-RPC message; throws the schema's error when it is not one. */
export function parseJsonRpcMessage(value: unknown): JSONRPCMessage {
  return isCommonMessage(value) ? value : (parseJSONRPCMessage(value) as JSONRPCMessage)
}

/** `value` as a JSON-RPC message, or the schema's failure. */
export function safeParseJsonRpcMessage(value: unknown): { success: true; data: JSONRPCMessage } | { success: false } {
  if (isCommonMessage(value)) return { success: true, data: value }
  jsonRpcMessageSchema ??= specTypeSchemas.JSONRPCMessage['~standard']
  const parsed = jsonRpcMessageSchema.validate(value)
  return parsed.issues === undefined ? { success: true, data: parsed.value as JSONRPCMessage } : { success: false }
}
