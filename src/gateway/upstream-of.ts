// Which upstream server serves a tool: asked on every call (the upstream cap, the journal's
// credential), so each connection's name list is turned into a set once per list. A connection
// hands back the same frozen list until its tools change, so the set is rebuilt only then.

const sets = new WeakMap<readonly string[], ReadonlySet<string>>()

/** The config name of the connection that serves `tool` (a registered, prefixed name), or undefined. */
export function upstreamOf(
  connections: ReadonlyMap<string, { readonly tools: readonly string[] }>,
  tool: string,
): string | undefined {
  for (const [name, connection] of connections) {
    const tools = connection.tools
    let set = sets.get(tools)
    if (set === undefined) {
      set = new Set(tools)
      sets.set(tools, set)
    }
    if (set.has(tool)) return name
  }
  return undefined
}
