// A raw MCP 2026-07-28 `tools/call` over HTTP, as a client that answers input-required results
// itself sends it: the `_meta` envelope, the standard headers, a bearer token, and on a retry the
// sealed `requestState` with the answer to toolgate's approval.

/** The envelope of a raw client that declares elicitation. */
export const RAW_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
}

/** A 2026-07-28 JSON-RPC reply as the raw tests read it: an error, or a result that may ask for input. */
export interface ModernReply {
  id?: number | string
  error?: { code: number; message: string }
  result?: {
    resultType?: string
    requestState?: string
    inputRequests?: Record<string, { method?: string; params?: { message?: string } }>
    isError?: boolean
    content?: unknown
    structuredContent?: unknown
  }
}

/** The input key toolgate asks its approval under. */
export const APPROVAL_KEY = 'toolgate/approval'

let requestId = 0

/**
 * One `tools/call` of `name` to `endpoint` as the bearer of `token`; its JSON-RPC reply (JSON or the
 * SSE event's data). `meta` joins the envelope (say, `toolgate/program` naming the program).
 */
export async function rawModernCall<Reply>(
  endpoint: string,
  token: string,
  name: string,
  args: Record<string, unknown>,
  retry?: { state: string; answer: unknown },
  meta?: Record<string, unknown>,
): Promise<Reply> {
  const reply = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++requestId,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: { ...RAW_ENVELOPE, ...meta },
        ...(retry ? { requestState: retry.state, inputResponses: { [APPROVAL_KEY]: retry.answer } } : {}),
      },
    }),
  })
  const text = await reply.text()
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}')
  return JSON.parse(data) as Reply
}
