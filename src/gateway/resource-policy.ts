// The gateway policy over prompts and resources: the same allow/deny/ask globs as for tools, a
// glob addressing a prompt when it starts with "prompt:" and a resource when it starts with
// "resource:" (the rest is matched against the served prompt name or the resource URI).

import type { CatalogSubject } from '../policy/index.js'
import type { PolicyConfig } from './config.js'
import { nameGlob } from './policy.js'

export type { CatalogSubject }

/** The policy's verdict on one prompt or resource. */
export type CatalogVerdict =
  | { readonly verdict: 'allow' }
  /** Hidden from lists and refused; `reason` says which rule. */
  | { readonly verdict: 'hidden'; readonly reason: string }
  /** Listed, and a person is asked before each read or get. */
  | { readonly verdict: 'ask'; readonly reason: string }

function matches(glob: string, subject: string): boolean {
  return nameGlob(glob)(subject)
}

/** The globs of `list` that address `kind`, without their `kind:` head. */
function globsFor(list: readonly string[] | undefined, kind: CatalogSubject): string[] {
  const head = `${kind}:`
  return (list ?? []).filter((glob) => glob.startsWith(head)).map((glob) => glob.slice(head.length))
}

/**
 * The verdict on a prompt (its served name) or a resource (its URI, or a template's URI template
 * text). `deny` hides; an `allow` list hides everything it does not match, prompts and resources
 * included (an allow list without any `prompt:` glob hides every prompt); `ask` asks.
 */
export function catalogVerdict(
  policy: PolicyConfig | undefined,
  kind: CatalogSubject,
  subject: string,
): CatalogVerdict {
  if (policy === undefined) return { verdict: 'allow' }
  const what = `${kind} "${subject}"`
  const denied = globsFor(policy.deny, kind).find((glob) => matches(glob, subject))
  if (denied !== undefined)
    return { verdict: 'hidden', reason: `the gateway policy denies the ${what} (deny: "${kind}:${denied}")` }
  if (policy.allow && !globsFor(policy.allow, kind).some((glob) => matches(glob, subject)))
    return { verdict: 'hidden', reason: `the gateway policy does not allow the ${what} (it matches no allow glob)` }
  const asked = globsFor(policy.ask, kind).find((glob) => matches(glob, subject))
  if (asked !== undefined)
    return { verdict: 'ask', reason: `the gateway policy asks before the ${what} (ask: "${kind}:${asked}")` }
  return { verdict: 'allow' }
}
