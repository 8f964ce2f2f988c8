// Whom a rule is for: the test of a rule's `who` against a caller's identity.
import type { ClaimValue, PolicyWho } from './policy-document.js'

/** The identity fields a `who` reads. */
export interface WhoIdentity {
  readonly subject: string
  readonly groups: readonly string[]
  readonly scopes: readonly string[]
  readonly claims: Readonly<Record<string, unknown>>
}

/** Every key of `who` must match; a `who` that names no one (refused by the check) never matches. */
export function whoMatcher(who: PolicyWho): (identity: WhoIdentity) => boolean {
  const tests: ((identity: WhoIdentity) => boolean)[] = []
  if (who.subject) {
    const subjects = new Set(who.subject)
    tests.push((identity) => subjects.has(identity.subject))
  }
  if (who.group) {
    const groups = new Set(who.group)
    tests.push((identity) => identity.groups.some((group) => groups.has(group)))
  }
  if (who.scope) {
    const scopes = new Set(who.scope)
    tests.push((identity) => identity.scopes.some((scope) => scopes.has(scope)))
  }
  for (const [name, values] of Object.entries(who.claim ?? {}))
    tests.push((identity) =>
      claimMatches(Object.hasOwn(identity.claims, name) ? identity.claims[name] : undefined, values),
    )
  if (tests.length === 0) return () => false
  return (identity) => tests.every((test) => test(identity))
}

function claimMatches(actual: unknown, values: readonly ClaimValue[]): boolean {
  if (Array.isArray(actual)) return actual.some((item) => values.includes(item as ClaimValue))
  return values.includes(actual as ClaimValue)
}
