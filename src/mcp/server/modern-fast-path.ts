// The MCP 2026-07-28 `tools/call` and `tools/list` of `serve --http` answered without the SDK's
// per-request server: no web Request and body stream, no abort signals chained per request, no
// zod parse of a request already parsed. Only a request that is plainly well-formed takes this
// path: every check the SDK's entry makes on it (the `_meta` envelope, the Mcp-Method, Mcp-Name
// and Mcp-Param-* headers, the params' shape) would pass, and nothing in it asks for what only
// the SDK's serving does (progress, log messages). Trace context (`traceparent`, `tracestate`) is
// the handlers' own to read (callParams), so it rides this path. So does a call's retry (its
// `requestState` and `inputResponses`) when its answers are plain elicitation results, which the SDK
// hands the handler as they came: the handler opens the state (seal, expiry, caller, tool,
// arguments, answers) on either path.
// Anything else, errors included, goes to the SDK (createModernHttpLeg), so that every refusal is
// the SDK's own. What the fast path sends is what the SDK sends for the same request:
// test/mcp/modern-fast-path.test.ts holds the two to the same answers.
import type { ServerResponse } from 'node:http'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import { type FastRequest, isPlain, modernTools, stamped } from '../protocol/modern-request.js'
import type { JSONRPCMessage } from '../protocol/wire-types.js'
import type { ModernRequestContext, ModernToolHandlers } from './server-modern.js'

export { type FastRequest, fastRequest } from '../protocol/modern-request.js'

/**
 * A tools/call result as the 2026-07-28 era projects it (the SDK's `projectCallToolResult` on that
 * era, as its declaration documents it): a non-object `structuredContent` gets a text rendering
 * appended when the result has no text block; nothing else changes.
 */
export function projectModernCallResult(result: { content?: unknown; structuredContent?: unknown }): unknown {
  const structured = result.structuredContent
  if (
    !('structuredContent' in result) ||
    (typeof structured === 'object' && structured !== null && !Array.isArray(structured))
  )
    return result
  const content = Array.isArray(result.content) ? result.content : []
  if (content.some((block) => isPlain(block) && block.type === 'text')) return result
  return { ...result, content: [...content, { type: 'text', text: JSON.stringify(structured) }] }
}

/** The resource-not-found code the era sends as invalid params (the SDK's codec maps it so on every era). */
const RESOURCE_NOT_FOUND = JsonRpcCode.ResourceNotFound

/**
 * Answers one fast request with the caller's handlers; every answer carries the request's id.
 * `acknowledged` gives what to send in its place once what the answer waits for has happened (the
 * gateway's store: the journal records before it). Resolves false, having sent nothing, for a
 * listing the SDK is to answer (see modernTools).
 */
export async function answerFast(
  handlers: ModernToolHandlers,
  res: ServerResponse,
  request: FastRequest,
  serverInfo: { name: string; version: string },
  acknowledged?: (message: JSONRPCMessage) => Promise<JSONRPCMessage>,
): Promise<boolean> {
  const { id } = request
  let message: JSONRPCMessage
  try {
    let result: Record<string, unknown>
    if (request.method === 'tools/list') {
      const listed = await handlers.toolsList()
      const tools = modernTools(listed.tools)
      if (tools === undefined) return false
      // The SDK's default cache hint for a listing: not to be kept, and private to this caller.
      result = stamped({ ...listed, tools }, serverInfo, { ttlMs: 0, cacheScope: 'private' })
    } else {
      // The call stops when the client goes away, as the SDK's request signal does.
      const aborted = new AbortController()
      const gone = () => {
        if (!res.writableFinished) aborted.abort()
      }
      res.once('close', gone)
      const rc: ModernRequestContext = {
        mcpReq: {
          requestState: () => request.retry?.requestState,
          ...(request.retry?.inputResponses === undefined ? {} : { inputResponses: request.retry.inputResponses }),
          envelope: request.params._meta,
          _meta: {},
          signal: aborted.signal,
          notify: async () => {},
        },
      }
      try {
        result = stamped(
          (await handlers.toolsCall({ params: request.params }, rc)) as Record<string, unknown>,
          serverInfo,
          {},
        )
      } finally {
        res.off('close', gone)
      }
    }
    message = { result, jsonrpc: '2.0', id }
  } catch (error) {
    const { code, message: text, data } = error as { code?: unknown; message?: unknown; data?: unknown }
    const wire =
      typeof code === 'number'
        ? code === RESOURCE_NOT_FOUND
          ? JsonRpcCode.InvalidParams
          : code
        : JsonRpcCode.InternalError
    message = {
      jsonrpc: '2.0',
      id,
      error: { code: wire, message: String(text ?? error), ...(data === undefined ? {} : { data }) },
    }
  }
  if (acknowledged !== undefined) message = await acknowledged(message)
  // A capability the client did not declare is refused with 400 on HTTP (the era's rule, as the SDK sends it).
  const status = 'error' in message && message.error.code === JsonRpcCode.MissingRequiredClientCapability ? 400 : 200
  if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(message))
  return true
}
