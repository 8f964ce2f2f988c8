// The upstream sessions (2025-11-25 and 2026-07-28 alike) run on the MCP SDK v2 client, which the
// CLI bundle leaves outside and loads at the first upstream connection: 0.4–0.9 s of module
// evaluation (its zod schemas above all) that used to come only after the bundle had loaded and
// the gateway had started. Started from the executable's first script right after the upstreams
// are spawned, it loads while they boot; the bundle's own `require` then finds it in Node's cache.

/** The load, once started (each bundle has its own copy of this module; Node's cache is shared). */
let loading: Promise<unknown> | undefined

/** Start loading the SDK v2 client, once; never throws (the first connection reports a failure). */
export function preloadUpstreamClient(): Promise<unknown> {
  loading ??= import('@modelcontextprotocol/client').catch(() => undefined)
  return loading
}
