// `policy.rules` compiled once: an index from subject, group and scope to the rules that may apply,
// so resolving an identity looks at its own candidates, not at every rule; each identity's result
// (which rules match, its merged globs) is what its agent scope enforces.
import type { ToolPresentationMode } from '../contract/execution.js'
import type { Identity } from '../mcp/gateway.js'
import { type ClaimValue, type PolicyRule, type PolicyWho, whoMatcher } from '../policy/index.js'
import { globsRegExp } from './policy.js'

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
  /** How many rules name `who` (rules for everyone grant nothing per identity). */
  readonly size: number
  /** Resolve `identity`: its matched rules and their merged settings. */
  resolve(identity: Identity): IdentityPolicy
  /**
   * The identity's key: equal for identities every rule treats alike (same subject, groups, scopes
   * and the claims rules read), so they may share one scope.
   */
  keyOf(identity: Identity): string
}

/** A glob with its regular expression, compiled once. */
interface Glob {
  readonly glob: string
  readonly re: RegExp
}

interface CompiledRule {
  readonly index: number
  readonly rule: PolicyRule & { readonly who: PolicyWho }
  readonly matches: (identity: Identity) => boolean
  readonly allow: readonly Glob[]
  readonly deny: readonly Glob[]
  readonly ask: readonly Glob[]
  readonly timeouts: readonly (Glob & { readonly ms: number })[]
}

function globs(list: readonly string[] | undefined): Glob[] {
  return (list ?? []).map((glob) => ({ glob, re: globsRegExp([glob]) as RegExp }))
}

/** Compile `rules` once; resolving an identity then costs its candidate rules, not all of them. */
export function compileRules(all: readonly PolicyRule[]): CompiledRules {
  // Rules without `who` are for everyone and grant nothing: the policy module decides them per call,
  // as it does the `deny` and `ask` of a rule with `when` (its `allow` lists the tool, the call decides).
  const rules = all.map((rule) => (rule.who === undefined ? { ...rule, who: {} } : rule)) as (PolicyRule & {
    who: PolicyWho
  })[]
  const compiled = rules.map(
    (rule, index): CompiledRule => ({
      index,
      rule,
      matches: whoMatcher(rule.who),
      allow: globs(rule.allow),
      deny: rule.when === undefined ? globs(rule.deny) : [],
      ask: rule.when === undefined ? globs(rule.ask) : [],
      timeouts: Object.entries(rule.timeoutMs ?? {}).map(([glob, ms]) => ({
        glob,
        ms,
        re: globsRegExp([glob]) as RegExp,
      })),
    }),
  )
  const bySubject = new Map<string, CompiledRule[]>()
  const byGroup = new Map<string, CompiledRule[]>()
  const byScope = new Map<string, CompiledRule[]>()
  // Rules naming only claims are filed under their first claim's name and each accepted value.
  // A claim's values are Map keys as they are (Map compares them with SameValueZero, so "1" and 1 differ).
  const byClaim = new Map<string, Map<ClaimValue, CompiledRule[]>>()
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
    else {
      const [name, values] = Object.entries(who.claim ?? {})[0] ?? []
      if (name === undefined || values === undefined) continue
      let byValue = byClaim.get(name)
      if (byValue === undefined) {
        byValue = new Map()
        byClaim.set(name, byValue)
      }
      for (const value of values) {
        const list = byValue.get(value)
        if (list) list.push(rule)
        else byValue.set(value, [rule])
      }
    }
  }
  const claimIndex = [...byClaim]
  const sortedClaims = [...claimNames].sort()

  // Each resolve marks the rules it collected with its own number, so a rule reached twice (by
  // two groups, say) is taken once without building a set.
  const seen = new Uint32Array(compiled.length)
  let pass = 0
  const resolve = (identity: Identity): IdentityPolicy => {
    pass = pass === 0xffffffff ? 1 : pass + 1
    if (pass === 1) seen.fill(0)
    const matched: CompiledRule[] = []
    const take = (rules: readonly CompiledRule[] | undefined) => {
      if (rules === undefined) return
      for (const rule of rules) {
        if (seen[rule.index] === pass) continue
        seen[rule.index] = pass
        if (rule.matches(identity)) matched.push(rule)
      }
    }
    take(bySubject.get(identity.subject))
    for (const group of identity.groups) take(byGroup.get(group))
    for (const scope of identity.scopes) take(byScope.get(scope))
    for (const [name, byValue] of claimIndex) {
      const actual = identity.claims[name]
      if (Array.isArray(actual)) {
        for (const value of actual) if (isClaimValue(value)) take(byValue.get(value))
      } else if (isClaimValue(actual)) take(byValue.get(actual))
    }
    matched.sort((a, b) => a.index - b.index)
    return identityPolicy(identity, matched)
  }
  // Canonical: sorted and deduplicated lists, and a missing claim kept apart from a null one (a
  // rule can match `null`, never a missing claim).
  const keyOf = (identity: Identity) =>
    JSON.stringify([
      identity.subject,
      [...new Set(identity.groups)].sort(),
      [...new Set(identity.scopes)].sort(),
      sortedClaims.map((name) => (identity.claims[name] === undefined ? [] : [identity.claims[name]])),
    ])
  // Only rules for someone grant: rules for everyone leave an identity's grants to the top level.
  return { size: all.filter((rule) => rule.who !== undefined).length, resolve, keyOf }
}

function identityPolicy(identity: Identity, rules: readonly CompiledRule[]): IdentityPolicy {
  // The identity's globs, gathered from its matched rules (already compiled): no regex is built here.
  const allow: Glob[] = []
  const deny: Glob[] = []
  const ask: Glob[] = []
  const timeouts: (Glob & { readonly ms: number })[] = []
  for (const rule of rules) {
    allow.push(...rule.allow)
    deny.push(...rule.deny)
    ask.push(...rule.ask)
    timeouts.push(...rule.timeouts)
  }
  const who = JSON.stringify(identity.subject)
  const refusals = new Map<string, string | undefined>()
  const refusalOf = (name: string): string | undefined => {
    if (rules.length === 0) return `the gateway policy has no rule for ${who}: it sees no tools`
    const denied = deny.find((g) => g.re.test(name))
    if (denied) return `the gateway policy denies "${name}" to ${who} (deny: "${denied.glob}")`
    if (!allow.some((g) => g.re.test(name)))
      return `the gateway policy does not allow "${name}" to ${who} (no rule for them allows it)`
    return undefined
  }
  return Object.freeze({
    identity,
    matched: Object.freeze(rules.map((rule) => rule.index)),
    refusal(name: string) {
      if (refusals.has(name)) return refusals.get(name)
      const reason = refusalOf(name)
      // Names come from the registry (and calls of unknown names); bounded so a caller trying
      // made-up names cannot grow it without end.
      if (refusals.size < 10_000) refusals.set(name, reason)
      return reason
    },
    ask: (name: string) => ask.find((g) => g.re.test(name))?.glob,
    timeout(name: string) {
      const hit = timeouts.find((t) => t.re.test(name))
      return hit && { glob: hit.glob, ms: hit.ms }
    },
    mode: rules.find((rule) => rule.rule.mode !== undefined)?.rule.mode,
  })
}

function isClaimValue(value: unknown): value is ClaimValue {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}
