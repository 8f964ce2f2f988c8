// A running gateway taking a new config (`serve` on SIGHUP): the policy, the identities' rules and
// the deferral are swapped at once, for the calls that start from then on; upstreams added, removed
// or changed are connected and closed, a removed or changed one only once its calls in flight ended.
// Unchanged upstreams keep their connections. What the new settings may hold was validated before.
import type { Context } from 'cordis'
import type { McpConnection } from '../mcp/gateway.js'
import { directListener } from '../runtime/index.js'
import { whenSettled } from '../util/when-settled.js'
import type { ServerConfig } from './config.js'
import type { Log } from './log.js'
import type { GatewaySettings } from './settings.js'

/** What a reload changed in the gateway. */
export interface GatewayReloadSummary {
  /** Whether the policy (its globs, deadlines or rules) changed. */
  readonly policy: boolean
  readonly added: readonly string[]
  readonly removed: readonly string[]
  readonly changed: readonly string[]
}

/** The parts of a gateway a reload works on (see openGateway). */
export interface GatewayReloadParts {
  readonly connections: Map<string, McpConnection>
  /** Server names in config order: replaced in place by the new config's. */
  readonly order: string[]
  /** Connect one upstream (its first attempt made); it retries on its own when down. */
  connect(name: string, spec: ServerConfig): Promise<McpConnection>
  /** Forget what was reported about a server no longer configured. */
  forget(name: string): void
  /** Judge by the new policy and deferral from now on. */
  swapPolicy(next: GatewaySettings): void
  /** Tell the clients the prompt and resource lists may have changed. */
  catalogChanged(): void
  readonly calls: ToolCallsInFlight
}

/** How long a removed or changed upstream's calls in flight may take before it is closed under them. */
export const UPSTREAM_RETIRE_MS = 30_000

/** Whether a server's entry changed in a way its connection depends on (`defer` and `required` do not). */
function connectionKey(spec: ServerConfig): string {
  const { defer: _defer, required: _required, ...rest } = spec as ServerConfig & { defer?: unknown; required?: unknown }
  return JSON.stringify(rest)
}

/** Swap `next` into the gateway whose settings were `previous`; resolves once every new upstream was tried once. */
export async function reloadGateway(
  parts: GatewayReloadParts,
  previous: GatewaySettings,
  next: GatewaySettings,
  log: Log,
  retireMs = UPSTREAM_RETIRE_MS,
): Promise<GatewayReloadSummary> {
  const before = previous.servers
  const after = next.servers
  const added = Object.keys(after).filter((name) => !(name in before))
  const removed = Object.keys(before).filter((name) => !(name in after))
  const changed = Object.keys(after).filter(
    (name) =>
      name in before && connectionKey(before[name] as ServerConfig) !== connectionKey(after[name] as ServerConfig),
  )
  const policy = JSON.stringify(previous.policy) !== JSON.stringify(next.policy)

  // New calls are judged by the new policy from here; those already past the guard keep their verdict.
  parts.swapPolicy(next)
  parts.order.splice(0, parts.order.length, ...Object.keys(after))

  const retire = async (name: string) => {
    const connection = parts.connections.get(name)
    if (connection === undefined) return
    if (!(await parts.calls.idle(connection.tools, retireMs)))
      log.info(`servers.${name}: calls still in flight after ${retireMs / 1000} s; closing it under them`)
    await connection.close()
    if (parts.connections.get(name) === connection) parts.connections.delete(name)
  }
  const connect = async (name: string) => {
    const connection = await parts.connect(name, after[name] as ServerConfig)
    parts.connections.set(name, connection)
  }
  await Promise.all([
    ...removed.map(async (name) => {
      await retire(name)
      parts.forget(name)
    }),
    ...changed.map(async (name) => {
      await retire(name)
      await connect(name)
    }),
    ...added.map(connect),
  ])
  // The deferral counts the tools listed now, so it is judged again once the upstreams settled.
  if (added.length + removed.length + changed.length > 0) parts.swapPolicy(next)
  if (policy || added.length + removed.length + changed.length > 0) parts.catalogChanged()
  return { policy, added, removed, changed }
}

/** Calls in progress by tool name, so that an upstream is closed only once its own calls ended. */
export class ToolCallsInFlight {
  readonly #running = new Map<string, number>()
  readonly #waiters = new Set<() => void>()

  /** Count every call of `ctx`'s tools while it runs. */
  install(ctx: Context): void {
    // Not async: one reaction on the next listener's promise instead of a frame of its own per call.
    ctx.on(
      'tools/execute',
      directListener((exec, next) => {
        const name = exec.name
        this.#running.set(name, (this.#running.get(name) ?? 0) + 1)
        return whenSettled(next, () => this.#ended(name))
      }),
    )
  }

  #ended(name: string): void {
    const left = (this.#running.get(name) ?? 1) - 1
    if (left === 0) this.#running.delete(name)
    else this.#running.set(name, left)
    if (this.#waiters.size > 0) for (const wake of [...this.#waiters]) wake()
  }

  /** Resolves true once no call of `tools` runs, false when `ms` passes first. */
  idle(tools: readonly string[], ms: number): Promise<boolean> {
    const busy = () => tools.some((tool) => this.#running.has(tool))
    if (!busy()) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (idle: boolean) => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        resolve(idle)
      }
      const check = () => {
        if (!busy()) done(true)
      }
      const timer = setTimeout(() => done(false), ms)
      this.#waiters.add(check)
    })
  }
}
