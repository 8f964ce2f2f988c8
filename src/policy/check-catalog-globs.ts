// The config check of the policy globs that address prompts ("prompt:GLOB") and resources
// ("resource:GLOB"); kept apart from the matching so that checking a config loads nothing else.

/** What a `prompt:` / `resource:` glob addresses. */
export type CatalogSubject = 'prompt' | 'resource'

const KINDS: readonly CatalogSubject[] = ['prompt', 'resource']

/** Config issues of the `prompt:` / `resource:` globs of a `policy` object (unchecked input). */
export function catalogGlobIssues(policy: Record<string, unknown>): string[] {
  const issues: string[] = []
  for (const key of ['allow', 'deny', 'ask'] as const) {
    const list = policy[key]
    if (!Array.isArray(list)) continue
    list.forEach((glob, i) => {
      if (typeof glob !== 'string') return
      for (const kind of KINDS)
        if (glob === `${kind}:`)
          issues.push(`policy.${key}[${i}]: "${glob}" needs a glob after "${kind}:" (e.g. "${kind}:*")`)
    })
  }
  const timeouts = policy.timeoutMs
  if (typeof timeouts === 'object' && timeouts !== null)
    for (const glob of Object.keys(timeouts))
      if (KINDS.some((kind) => glob.startsWith(`${kind}:`)))
        issues.push(`policy.timeoutMs.${glob}: deadlines apply to tool calls only, not to prompts or resources`)
  return issues
}
