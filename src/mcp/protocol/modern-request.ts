// What the 2026-07-28 era's plainest requests look like, and how its listing and results are
// stamped, without the SDK: the fast path of `serve --http` (server/modern-fast-path.ts) answers
// such requests without the SDK's per-request server, and serve's first script
// (gateway/raw-first-http.ts) answers a first `server/discover` and `tools/list` before the SDK is
// even loaded. Only a request that every check of the SDK's entry would pass is "plain"; anything
// else is the SDK's to answer (or refuse). The envelope keys are the SDK's, written out (a test
// holds them equal to its exports).
import type { IncomingMessage } from 'node:http'

/** The `_meta` keys of the 2026-07-28 envelope (the SDK's `*_META_KEY` exports). */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion'
export const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo'
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities'
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo'

/** The revision of these requests. */
export const MODERN_REVISION = '2026-07-28'

/** A request the fast path answers. */
export interface FastRequest {
  readonly method: 'tools/call' | 'tools/list'
  readonly id: string | number
  readonly params: { name: string; arguments?: Record<string, unknown>; _meta: Record<string, unknown> }
  /** A retry's state and answers, lifted out of the params as the SDK lifts them. */
  readonly retry?: { readonly requestState: string; readonly inputResponses?: Record<string, unknown> }
}

/** An object made by JSON.parse from `{…}` (or a literal): not an array, not null, no other prototype. */
export function isPlain(value: unknown): value is Record<string, unknown> {
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
  if (one(req, 'mcp-protocol-version') !== MODERN_REVISION || one(req, 'mcp-method') !== method) return undefined
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
  if (!plainEnvelope(params._meta, method === 'tools/call' ? CALL_META_KEYS : META_KEYS)) return undefined
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
 * A `server/discover` of the plainest kind (its headers naming it, its params only the envelope),
 * which the SDK answers with the server's versions, capabilities and info whoever asks: its id.
 */
export function plainDiscover(
  req: Pick<IncomingMessage, 'method' | 'headers'>,
  body: unknown,
): string | number | undefined {
  if (req.method !== 'POST' || !isPlain(body) || !only(body, BODY_KEYS)) return undefined
  const { jsonrpc, id, method, params } = body
  if (jsonrpc !== '2.0' || method !== 'server/discover' || !isPlain(params) || !only(params, LIST_KEYS))
    return undefined
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined
  if (one(req, 'mcp-protocol-version') !== MODERN_REVISION || one(req, 'mcp-method') !== method) return undefined
  const type = one(req, 'content-type')
  if (type === undefined || type.split(';')[0].trim().toLowerCase() !== 'application/json') return undefined
  if (!one(req, 'accept')?.includes('application/json')) return undefined
  for (const name in req.headers)
    if (name.startsWith('mcp-param-') || name === 'last-event-id' || name === 'mcp-name') return undefined
  return plainEnvelope(params._meta, META_KEYS) ? id : undefined
}

/** An envelope of exactly `keys` (the three, and maybe trace context): this revision, a plain client. */
function plainEnvelope(meta: unknown, keys: readonly string[]): boolean {
  if (!isPlain(meta) || !only(meta, keys)) return false
  if (meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return false
  for (const key of TRACE_KEYS) if (key in meta && typeof meta[key] !== 'string') return false
  const info = meta[CLIENT_INFO_META_KEY]
  if (!isPlain(info) || !only(info, INFO_KEYS) || typeof info.name !== 'string' || typeof info.version !== 'string')
    return false
  return plainCapabilities(meta[CLIENT_CAPABILITIES_META_KEY])
}

/**
 * A listing's tools as the 2026-07-28 era sends them: `execution.taskSupport` is not of this era (tasks
 * are an extension) and the SDK leaves `execution` out. Undefined when a tool's `execution` says
 * more than that: the SDK's serving answers such a listing.
 */
export function modernTools(tools: unknown): unknown[] | undefined {
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
export function stamped(
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
