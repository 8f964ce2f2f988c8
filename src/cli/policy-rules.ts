// `policy.rules` compiled once: an index from subject, group and scope to the rules that may apply,
// so resolving an identity looks at its own candidates, not at every rule; each identity's result
// (which rules match, its merged globs) is what its agent scope enforces.
import type { ToolPresentationMode } from '../contract/execution.js'
import type { ClaimValue, PolicyRule, PolicyWho } from './config-rules.js'
import type { Identity } from './identity.js'

/** What the rules decide for one identity, name by name. */
export interface IdentityPolicy {
  readonly identity: Identity
  /** Indexes in `policy.rules` of the rules that matched, in config order. */
  readonly matched: readonly number[]
  /** Why `name` is hidden and refused for this identity, or undefined. */
  refusal(name: string): string | undefined
  /** The ask glob that makes a call of `name` need approval, or undefined. */
  ask(name: string): string | undefined
  /** The first deadline whose glob matches `name` (rules in config order), or undefined. */
  timeout(name: string): { readonly glob: string; readonly ms: number } | undefined
  /** The presentation of the first matching rule that sets `mode`. */
  readonly mode: ToolPresentationMode | undefined
}

/** The compiled rules. */
export interface CompiledRules {
  readonly size: number
  /** Resolve `identity`: its matched rules and their merged settings. */
  resolve(identity: Identity): IdentityPolicy
  /**
   * The identity's key: equal for identities every rule treats alike (same subject, groups, scopes
   * and the claims rules read), so they may share one scope.
   */
  keyOf(identity: Identity): string
}

/** A glob list as one anchored regular expression (`*` any run, `?` one character). */
export function globsRegExp(globs: readonly string[]): RegExp | undefined {
  if (globs.length === 0) return undefined
  const sources = globs.map((glob) =>
    glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.'),
  )
  return new RegExp(`^(?:${sources.join('|')})$`)
}

interface CompiledRule {
  readonly index: number
  readonly rule: PolicyRule
  readonly matches: (identity: Identity) => boolean
}

/** Compile `rules` once; resolving an identity then costs its candidate rules, not all of them. */
export function compileRules(rules: readonly PolicyRule[]): CompiledRules {
  const compiled = rules.map((rule, index): CompiledRule => ({ index, rule, matches: whoMatcher(rule.who) }))
  const bySubject = new Map<string, CompiledRule[]>()
  const byGroup = new Map<string, CompiledRule[]>()
  const byScope = new Map<string, CompiledRule[]>()
  const byClaimOnly: CompiledRule[] = []
  const claimNames = new Set<string>()
  const add = (map: Map<string, CompiledRule[]>, keys: readonly string[], rule: CompiledRule) => {
    for (const key of keys) {
      const list = map.get(key)
      if (list) list.push(rule)
      else map.set(key, [rule])
    }
  }
  // Each rule is filed under one of its keys (every key must match anyway); its full test runs after.
  for (const rule of compiled) {
    const { who } = rule.rule
    for (const name of Object.keys(who.claim ?? {})) claimNames.add(name)
    if (who.subject) add(bySubject, who.subject, rule)
    else if (who.group) add(byGroup, who.group, rule)
    else if (who.scope) add(byScope, who.scope, rule)
    else byClaimOnly.push(rule)
  }
  const sortedClaims = [...claimNames].sort()

  const resolve = (identity: Identity): IdentityPolicy => {
    const candidates = new Set<CompiledRule>(bySubject.get(identity.subject))
    for (const group of identity.groups) for (const rule of byGroup.get(group) ?? []) candidates.add(rule)
    for (const scope of identity.scopes) for (const rule of byScope.get(scope) ?? []) candidates.add(rule)
    for (const rule of byClaimOnly) candidates.add(rule)
    const matched = [...candidates].filter((rule) => rule.matches(identity)).sort((a, b) => a.index - b.index)
    return identityPolicy(
      identity,
      matched.map((rule) => rule.index),
      matched.map((rule) => rule.rule),
    )
  }
  const keyOf = (identity: Identity) =>
    JSON.stringify([
      identity.subject,
      [...identity.groups].sort(),
      [...identity.scopes].sort(),
      sortedClaims.map((name) => identity.claims[name] ?? null),
    ])
  return { size: rules.length, resolve, keyOf }
}

function identityPolicy(identity: Identity, matched: number[], rules: readonly PolicyRule[]): IdentityPolicy {
  const allow = globsRegExp(rules.flatMap((rule) => rule.allow ?? []))
  const denyGlobs = rules.flatMap((rule) => rule.deny ?? [])
  const deny = globsRegExp(denyGlobs)
  const askGlobs = rules.flatMap((rule) => rule.ask ?? [])
  const ask = globsRegExp(askGlobs)
  const timeouts = rules.flatMap((rule) =>
    Object.entries(rule.timeoutMs ?? {}).map(([glob, ms]) => ({ glob, ms, test: globsRegExp([glob]) as RegExp })),
  )
  const who = JSON.stringify(identity.subject)
  const refusals = new Map<string, string | undefined>()
  const refusalOf = (name: string): string | undefined => {
    if (matched.length === 0) return `the gateway policy has no rule for ${who}: it sees no tools`
    if (deny?.test(name)) {
      const glob = denyGlobs.find((g) => globsRegExp([g])?.test(name))
      return `the gateway policy denies "${name}" to ${who} (deny: "${glob}")`
    }
    if (!allow?.test(name)) return `the gateway policy does not allow "${name}" to ${who} (no rule for them allows it)`
    return undefined
  }
  return Object.freeze({
    identity,
    matched: Object.freeze(matched),
    refusal(name: string) {
      if (refusals.has(name)) return refusals.get(name)
      const reason = refusalOf(name)
      refusals.set(name, reason)
      return reason
    },
    ask(name: string) {
      if (!ask?.test(name)) return undefined
      return askGlobs.find((g) => globsRegExp([g])?.test(name))
    },
    timeout(name: string) {
      const hit = timeouts.find((t) => t.test.test(name))
      return hit && { glob: hit.glob, ms: hit.ms }
    },
    mode: rules.find((rule) => rule.mode !== undefined)?.mode,
  })
}

function whoMatcher(who: PolicyWho): (identity: Identity) => boolean {
  const tests: ((identity: Identity) => boolean)[] = []
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
    tests.push((identity) => claimMatches(identity.claims[name], values))
  // A rule that names no one (refused by the config check) never matches.
  if (tests.length === 0) return () => false
  return (identity) => tests.every((test) => test(identity))
}

function claimMatches(actual: unknown, values: readonly ClaimValue[]): boolean {
  if (Array.isArray(actual)) return actual.some((item) => values.includes(item as ClaimValue))
  return values.includes(actual as ClaimValue)
}
