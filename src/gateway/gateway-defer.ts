// Tool deferral in the gateway: which upstream tools wait behind `search_tools`, and a scope per
// client session so that what one session's searches load is listed to that session only.
import type { Agent } from '../contract/execution.js'
import type { McpConnection, McpServerHandle } from '../mcp/gateway.js'
import type { ToolRuntime } from '../preset/index.js'
import { type AgentHandle, createAgent } from '../runtime/index.js'
import { serverPrefix } from './config.js'
import type { GatewaySettings } from './settings.js'

/**
 * Defer, for the served agent, each server's tools its config asks for (`"defer": true` or
 * patterns over its own tool names), and every upstream tool when the upstreams list more than
 * `deferAbove` at startup. Returns whether anything is deferred (then sessions get scopes of their own).
 */
export function applyDeferral(
  tools: ToolRuntime,
  agent: Agent,
  settings: GatewaySettings,
  connections: ReadonlyMap<string, McpConnection>,
): boolean {
  const patterns = deferralPatterns(settings, connections)
  if (patterns.length === 0) return false
  tools.defer(patterns, agent)
  return true
}

/** The name patterns {@link applyDeferral} defers (none: nothing is deferred). */
export function deferralPatterns(
  settings: Pick<GatewaySettings, 'servers' | 'deferAbove'>,
  connections: ReadonlyMap<string, McpConnection>,
): string[] {
  const total = [...connections.values()].reduce((sum, connection) => sum + connection.tools.length, 0)
  const auto = settings.deferAbove !== undefined && total > settings.deferAbove
  const patterns: string[] = []
  for (const [name, server] of Object.entries(settings.servers)) {
    const defer = auto ? true : server.defer
    if (defer === undefined || defer === false) continue
    const prefix = serverPrefix(name, server)
    if (defer !== true) patterns.push(...defer.map((pattern) => prefix + pattern))
    else if (prefix !== '') patterns.push(`${prefix}*`)
    // Without a prefix nothing tells the server's names apart: defer the ones it listed.
    else patterns.push(...(connections.get(name)?.tools ?? []))
  }
  return patterns
}

/**
 * `make` for each client session: with deferral on, a child agent of the served one per session
 * (it inherits the policy and the deferral, and keeps its own loaded tools), disposed when the
 * session closes; otherwise the served agent itself.
 */
export function perSession(
  deferring: boolean | (() => boolean),
  served: AgentHandle,
  make: (agent: AgentHandle) => McpServerHandle,
): () => McpServerHandle {
  if (deferring === false) return () => make(served)
  let sessions = 0
  return () => {
    // Asked per session: a reload may start or stop deferring.
    if (typeof deferring === 'function' && !deferring()) return make(served)
    const agent = createAgent(served.ctx, { id: `${served.id}/session-${++sessions}` })
    const server = make(agent)
    const onclose = server.onclose
    server.onclose = () => {
      onclose?.()
      void agent.dispose()
    }
    return server
  }
}
