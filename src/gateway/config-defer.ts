// The gateway config's tool-deferral keys: per server `"defer": true` or name patterns, and the
// top-level `"deferAbove"` count past which every upstream tool is deferred.

/** A server's `defer`: all of its tools, or those whose remote names match a pattern (`*` wildcard). */
export type ServerDefer = boolean | string[]

/** Check a server entry's `defer`; `undefined` when absent or wrong (the issue is recorded). */
export function checkServerDefer(value: unknown, at: string, issues: string[]): ServerDefer | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'boolean') return value
  if (Array.isArray(value) && value.length > 0) {
    const bad = value.findIndex((pattern) => typeof pattern !== 'string' || pattern === '')
    if (bad === -1) return value as string[]
    issues.push(`${at}.defer[${bad}]: expected a non-empty tool-name pattern`)
    return undefined
  }
  issues.push(`${at}.defer: expected true, false or a non-empty array of tool-name patterns (e.g. ["list_*"])`)
  return undefined
}

/** Check the top-level `deferAbove`: a whole number of tools. */
export function checkDeferAbove(value: unknown, issues: string[]): number | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value
  issues.push(`deferAbove: expected a whole number of tools (0 or more), got ${JSON.stringify(value)}`)
  return undefined
}
