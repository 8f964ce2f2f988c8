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
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/server'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { JSONRPCMessage } from '../protocol/wire-types.js'
import type { ModernRequestContext, ModernToolHandlers } from './server-modern.js'

/** The revision this path serves. */
const REVISION = '2026-07-28'

/** A request the fast path answers. */
export interface FastRequest {
  readonly method: 'tools/call' | 'tools/list'
  readonly id: string | number
  readonly params: { name: string; arguments?: Record<string, unknown>; _meta: Record<string, unknown> }
  /** A retry's state and answers, lifted out of the params as the SDK lifts them. */
  readonly retry?: { readonly requestState: string; readonly inputResponses?: Record<string, unknown> }
}

/** An object made by JSON.parse from `{…}` (or a literal): not an array, not null, no other prototype. */
function isPlain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Whether every own key of `value` is one of `allowed`. */
function only(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in value) if (!allowed.includes(key)) return false
  return true
}

const BODY_KEYS = ['jsonrpc', 'id', 'method', 'params']
const CALL_KEYS = ['name', 'arguments', '_meta', 'requestState', 'inputResponses']
const LIST_KEYS = ['_meta']
const META_KEYS = [PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]
/** The W3C trace context a `_meta` may carry besides the envelope (on a call only; strings only). */
const TRACE_KEYS = ['traceparent', 'tracestate']
const CALL_META_KEYS = [...META_KEYS, ...TRACE_KEYS]
const INFO_KEYS = ['name', 'version']
/** The capabilities a client may declare here, each with the members it may carry. */
const CAPABILITIES: Readonly<Record<string, readonly string[]>> = {
  elicitation: ['form', 'url'],
  sampling: ['context', 'tools'],
  roots: ['listChanged'],
}

/** Declared capabilities of the plainest kind: known names, empty objects inside (roots' listChanged a boolean). */
function plainCapabilities(value: unknown): boolean {
  if (!isPlain(value)) return false
  for (const name in value) {
    const members = CAPABILITIES[name]
    const declared = value[name]
    if (members === undefined || !isPlain(declared)) return false
    for (const member in declared) {
      if (!members.includes(member)) return false
      const inner = declared[member]
      if (member === 'listChanged' ? typeof inner !== 'boolean' : !(isPlain(inner) && Object.keys(inner).length === 0))
        return false
    }
  }
  return true
}

/** The actions of an elicitation result. */
const ACTIONS = ['accept', 'decline', 'cancel']

/**
 * A retry's answers of the plainest kind: each a bare form-mode elicitation result (an action, and
 * on accept flat content of strings, numbers, booleans), which the SDK keeps as it came. Any other
 * shape (a wrapped `{method, result}`, a sampling or roots result, `_meta`) goes to the SDK, whose
 * lift decides what it keeps.
 */
function plainAnswers(value: unknown): value is Record<string, unknown> {
  if (!isPlain(value)) return false
  for (const key in value) {
    const answer = value[key]
    if (!isPlain(answer) || !only(answer, ['action', 'content'])) return false
    if (!ACTIONS.includes(answer.action as string)) return false
    const { content } = answer
    if (content === undefined) continue
    if (!isPlain(content)) return false
    for (const field in content) {
      const kind = typeof content[field]
      if (kind !== 'string' && kind !== 'number' && kind !== 'boolean') return false
    }
  }
  return true
}

/** A single header's value; a repeated one is not for the fast path. */
function one(req: Pick<IncomingMessage, 'headers'>, name: string): string | undefined {
  const value = req.headers[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * The request, when the fast path answers it exactly as the SDK would (its body already parsed);
 * undefined sends it to the SDK.
 */
export function fastRequest(req: Pick<IncomingMessage, 'method' | 'headers'>, body: unknown): FastRequest | undefined {
  if (req.method !== 'POST' || !isPlain(body) || !only(body, BODY_KEYS)) return undefined
  const { jsonrpc, id, method, params } = body
  if (jsonrpc !== '2.0' || (method !== 'tools/call' && method !== 'tools/list')) return undefined
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined
  if (!isPlain(params)) return undefined
  // The headers: exactly the standard ones, naming what the body says.
  if (one(req, 'mcp-protocol-version') !== REVISION || one(req, 'mcp-method') !== method) return undefined
  const type = one(req, 'content-type')
  if (type === undefined || type.split(';')[0].trim().toLowerCase() !== 'application/json') return undefined
  if (!one(req, 'accept')?.includes('application/json')) return undefined
  for (const name in req.headers) if (name.startsWith('mcp-param-') || name === 'last-event-id') return undefined
  if (method === 'tools/call') {
    if (!only(params, CALL_KEYS) || typeof params.name !== 'string' || params.name === '') return undefined
    if (one(req, 'mcp-name') !== params.name) return undefined
    if (params.arguments !== undefined && !isPlain(params.arguments)) return undefined
    // A retry: a state (a non-empty string), with answers or none; answers without a state are the SDK's.
    if ('requestState' in params && (typeof params.requestState !== 'string' || params.requestState === ''))
      return undefined
    if ('inputResponses' in params && !('requestState' in params && plainAnswers(params.inputResponses)))
      return undefined
  } else if (!only(params, LIST_KEYS) || req.headers['mcp-name'] !== undefined) return undefined
  // The envelope: all three keys, and on a call the trace context; nothing else (no progress token, log level).
  const meta = params._meta
  if (!isPlain(meta) || !only(meta, method === 'tools/call' ? CALL_META_KEYS : META_KEYS)) return undefined
  if (meta[PROTOCOL_VERSION_META_KEY] !== REVISION) return undefined
  for (const key of TRACE_KEYS) if (key in meta && typeof meta[key] !== 'string') return undefined
  const info = meta[CLIENT_INFO_META_KEY]
  if (!isPlain(info) || !only(info, INFO_KEYS) || typeof info.name !== 'string' || typeof info.version !== 'string')
    return undefined
  if (!plainCapabilities(meta[CLIENT_CAPABILITIES_META_KEY])) return undefined
  if (typeof params.requestState !== 'string') return { method, id, params: params as FastRequest['params'] }
  const { requestState, inputResponses, ...rest } = params
  return {
    method,
    id,
    params: rest as FastRequest['params'],
    retry: { requestState, ...(inputResponses === undefined ? {} : { inputResponses: inputResponses as never }) },
  }
}

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

/**
 * A listing's tools as the 2026-07-28 era sends them: `execution.taskSupport` is not of this era (tasks
 * are an extension) and the SDK leaves `execution` out. Undefined when a tool's `execution` says
 * more than that: the SDK's serving answers such a listing.
 */
function modernTools(tools: unknown): unknown[] | undefined {
  if (!Array.isArray(tools)) return undefined
  const out: unknown[] = []
  for (const tool of tools) {
    if (!isPlain(tool) || !('execution' in tool)) {
      out.push(tool)
      continue
    }
    const { execution, ...rest } = tool
    if (!isPlain(execution) || !only(execution, ['taskSupport'])) return undefined
    out.push(rest)
  }
  return out
}

/**
 * A result as the SDK's 2026-07-28 serving stamps it: its type, and the server's info in `_meta`
 * unless the result already names a server there (an upstream's result relayed as it came).
 */
function stamped(
  result: Record<string, unknown>,
  serverInfo: { name: string; version: string },
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const meta = isPlain(result._meta) ? result._meta : {}
  return {
    ...result,
    resultType: result.resultType ?? 'complete',
    ...extra,
    _meta: { [SERVER_INFO_META_KEY]: serverInfo, ...meta },
  }
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
