// Which era an HTTP request to a dual-era endpoint is for, by the SDK's own classification: the
// same predicate as its isLegacyRequest, read from the node request's headers and the body the
// caller already parsed within its size limit, so that no web Request is built just to classify it.
import type { IncomingMessage } from 'node:http'
import { classifyInboundRequest } from '@modelcontextprotocol/server'

/** Whether the SDK routes this request (its body already parsed) to its 2026-07-28 path. */
export function isModernRequest(req: Pick<IncomingMessage, 'method' | 'headers'>, body: unknown): boolean {
  const version = header(req, 'mcp-protocol-version')
  const method = header(req, 'mcp-method')
  const name = header(req, 'mcp-name')
  return (
    classifyInboundRequest({
      httpMethod: req.method ?? 'GET',
      body,
      ...(version === undefined ? {} : { protocolVersionHeader: version }),
      ...(method === undefined ? {} : { mcpMethodHeader: method }),
      ...(name === undefined ? {} : { mcpNameHeader: name }),
    }).kind !== 'legacy'
  )
}

/** A header as a web Request gives it: repeated values joined by a comma and a space. */
function header(req: Pick<IncomingMessage, 'headers'>, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}
