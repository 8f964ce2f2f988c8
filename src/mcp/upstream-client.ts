// What the upstream link and its catalog ask of a connected upstream, whatever revision it speaks:
// the SDK v1 Client answers it for a 2025-11-25 upstream, the adapter in modern-session.ts for a
// 2026-07-28 one.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { JsonRpcCode } from './jsonrpc-codes.js'

/** The requests of a session with an upstream server (tool calls go their own way per era). */
export type UpstreamClient = Pick<
  Client,
  | 'getServerCapabilities'
  | 'listTools'
  | 'listResources'
  | 'listResourceTemplates'
  | 'listPrompts'
  | 'readResource'
  | 'subscribeResource'
  | 'unsubscribeResource'
  | 'getPrompt'
  | 'complete'
  | 'setLoggingLevel'
  | 'sendRootsListChanged'
  | 'close'
  | 'transport'
>

/** The protocol era a session speaks: `legacy` up to 2025-11-25, `modern` from 2026-07-28. */
export type McpProtocolEra = 'legacy' | 'modern'

/**
 * Whether a failed `initialize` says the server speaks only a later revision: it answered -32022
 * (an SDK error carrying the code, or, over Streamable HTTP, the JSON-RPC error in the body of the
 * HTTP error our transport reports). Anything else is an ordinary failure.
 */
export function refusesLegacyEra(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (code === JsonRpcCode.UnsupportedProtocolVersion) return true
  const text = error instanceof Error ? error.message : undefined
  if (text === undefined || typeof code !== 'number' || code < 400 || code > 499) return false
  const start = text.indexOf('{')
  if (start < 0) return false
  try {
    const body = JSON.parse(text.slice(start)) as { error?: { code?: unknown } }
    return body?.error?.code === JsonRpcCode.UnsupportedProtocolVersion
  } catch {
    return false
  }
}
