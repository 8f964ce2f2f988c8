// A policy document compiled once: globs become regular expressions, `when` expressions CEL
// programs, and a caller's rules are found once per identity; a decision then costs the rules
// that name the tool, and a `when` only where one of them has it.
import { ConfigError } from '../errors/config-error.js'
import { checkPolicyDocument } from './check-policy.js'
import { type Condition, type ConditionInput, compileCondition } from './conditions.js'
import { compileGlobs, firstGlob, type Glob } from './glob.js'
import { policyDigest } from './policy-digest.js'
import type { PolicyDocument, PolicyIdentity, PolicyQuota, PolicyRule } from './policy-document.js'
import { type WhoIdentity, whoMatcher } from './who.js'

/** One call as a policy decides it. */
export interface PolicyCall {
  /** The served tool name. */
  readonly tool: string
  /** The call's arguments (JSON). */
  readonly args?: unknown
  /** Who calls; without one, only the top level and the rules without `who` apply. */
  readonly identity?: PolicyIdentity
  /** For a Code Mode sub-call, the tool whose program made it (`run_code`). */
  readonly parentTool?: string
  /** 0 for a direct call, 1 for a sub-call of it, and so on. */
  readonly depth?: number
  /** The tools called so far in this turn, each with its count. */
  readonly turn?: Readonly<Record<string, number>>
}

/** A rule that took part in a decision: `label` is its `id`, or where it is (`rules[2]`, `deny[0]`). */
export interface PolicyRuleRef {
  /** Index in `rules`, or -1 for the top level's `allow`, `deny`, `ask` or `timeoutMs`. */
  readonly index: number
  readonly id?: string
  readonly label: string
}

/** A quota a call counts against, once it is dispatched. */
export interface PolicyQuotaCheck {
  readonly rule: PolicyRuleRef
  readonly quota: PolicyQuota
  /** Whose count: the rule and the subject, identity or nothing (`by: global`). */
  readonly key: string
}

/** What the policy decides for one call. */
export interface PolicyDecision {
  /** `quota` only from `explain`, when a quota is used up; a call learns that at dispatch. */
  readonly decision: 'allow' | 'deny' | 'ask' | 'quota'
  /** The rule that decided, if one did (an allow without rules has none). */
  readonly rule?: PolicyRuleRef
  /** Why: the deciding rule's `reason` when it has one, else a sentence naming the rule. */
  readonly reason?: string
  /** Every rule whose `who`, globs and `when` matched the call, in document order. */
  readonly matched: readonly PolicyRuleRef[]
  /** The call's deadline in ms, if a `timeoutMs` glob applies. */
  readonly deadlineMs?: number
  /** The quotas the call counts against. */
  readonly quotas: readonly PolicyQuotaCheck[]
  /** Milliseconds until a call is allowed again (with `decision: 'quota'`). */
  readonly retryAfterMs?: number
  /** The digest of the policy version that decided. */
  readonly policy: string
}

/** A compiled policy. */
export interface CompiledPolicy {
  readonly document: PolicyDocument
  /** `sha256:` and the hex digest of the canonical document. */
  readonly digest: string
  /** Whether any rule names `who` (then an identity no rule grants sees nothing). */
  readonly grantsByIdentity: boolean
  /**
   * Whether any rule has a `when`: only a `when` reads a call's parent tool, depth and turn, so an
   * enforcement keeps them only then.
   */
  readonly conditional: boolean
  /** Decide `call` (without quotas' counts: see `PolicyDecision.quotas`). Never throws. */
  decide(call: PolicyCall): PolicyDecision
  /**
   * Why `tool` is refused to `identity` whatever the call's arguments, parent or turn (then it is
   * hidden from the identity's listing), or undefined when some call of it may be allowed. A rule
   * with `when` cannot be decided without a call, so it never hides a tool.
   */
  refusal(tool: string, identity?: PolicyIdentity): string | undefined
}

interface CompiledRule {
  readonly index: number
  readonly ref: PolicyRuleRef
  readonly rule: PolicyRule
  readonly who: ((identity: WhoIdentity) => boolean) | undefined
  readonly allow: readonly Glob[]
  readonly deny: readonly Glob[]
  readonly ask: readonly Glob[]
  readonly tools: readonly Glob[]
  readonly timeouts: readonly (Glob & { readonly ms: number })[]
  readonly when: Condition | undefined
}

/** A rule that names a tool, with which of its globs do. */
interface ToolRule {
  readonly rule: CompiledRule
  readonly allows: boolean
  readonly denies: boolean
  readonly asks: boolean
  readonly timeout: number | undefined
}

const NO_IDENTITY: WhoIdentity = Object.freeze({ subject: '', groups: [], scopes: [], claims: {} })

/**
 * Check and compile `document`. A problem (a `when` that does not parse or type-check among them)
 * throws a {@link ConfigError} at `where` listing each with its path.
 */
export function compilePolicy(document: unknown, where = 'policy'): CompiledPolicy {
  const issues: string[] = []
  const policy = checkPolicyDocument(document, issues)
  if (issues.length) throw new ConfigError(where, issues)
  return compileChecked(policy)
}

/** Compile a document already checked (the gateway's config). */
export function compileChecked(policy: PolicyDocument): CompiledPolicy {
  const digest = policyDigest(policy)
  const topAllow = policy.allow === undefined ? undefined : compileGlobs(policy.allow)
  const topDeny = compileGlobs(policy.deny)
  const topAsk = compileGlobs(policy.ask)
  const topTimeouts = Object.entries(policy.timeoutMs ?? {}).map(([glob, ms]) => ({ ...compileGlobs([glob])[0], ms }))
  const rules: CompiledRule[] = (policy.rules ?? []).map((rule, index) => {
    const when = rule.when === undefined ? undefined : compileCondition(rule.when)
    if (when !== undefined && typeof when !== 'function')
      throw new ConfigError(`policy.rules[${index}].when`, when.problem)
    return {
      index,
      ref: Object.freeze({ index, ...(rule.id ? { id: rule.id } : {}), label: rule.id ?? `rules[${index}]` }),
      rule,
      who: rule.who === undefined ? undefined : whoMatcher(rule.who),
      allow: compileGlobs(rule.allow),
      deny: compileGlobs(rule.deny),
      ask: compileGlobs(rule.ask),
      tools: compileGlobs(rule.tools),
      timeouts: Object.entries(rule.timeoutMs ?? {}).map(([glob, ms]) => ({ ...compileGlobs([glob])[0], ms })),
      when,
    }
  })
  const grantsByIdentity = rules.some((rule) => rule.who !== undefined)
  const everyone = rules.filter((rule) => rule.who === undefined)

  // Per identity (by object: a library agent's identity, or the gateway's per request), the rules
  // for it; per tool name, the rules that name the tool. Both bounded.
  interface Resolved {
    readonly rules: readonly CompiledRule[]
    readonly named: boolean
    readonly byTool: Map<string, readonly ToolRule[]>
  }
  const byIdentity = new WeakMap<object, Resolved>()
  const anonymous: Resolved = { rules: everyone, named: false, byTool: new Map() }
  const resolve = (identity: PolicyIdentity | undefined): Resolved => {
    if (identity === undefined) return anonymous
    const known = byIdentity.get(identity)
    if (known) return known
    const who = whoIdentity(identity)
    const mine = rules.filter((rule) => rule.who === undefined || rule.who(who))
    const resolved = { rules: mine, named: mine.some((rule) => rule.who !== undefined), byTool: new Map() }
    byIdentity.set(identity, resolved)
    return resolved
  }
  const toolRules = (resolved: Resolved, tool: string): readonly ToolRule[] => {
    const known = resolved.byTool.get(tool)
    if (known) return known
    const list: ToolRule[] = []
    for (const rule of resolved.rules) {
      const allows = firstGlob(rule.allow, tool) !== undefined
      const denies = firstGlob(rule.deny, tool) !== undefined
      const asks = firstGlob(rule.ask, tool) !== undefined
      const named = allows || denies || asks || firstGlob(rule.tools, tool) !== undefined
      const timeout = rule.timeouts.find((t) => t.re.test(tool))
      if (named || timeout) list.push({ rule, allows, denies, asks, timeout: timeout?.ms })
    }
    if (resolved.byTool.size < 10_000) resolved.byTool.set(tool, list)
    return list
  }

  const decide = (call: PolicyCall): PolicyDecision => {
    const tool = call.tool
    const quoted = JSON.stringify(tool)
    const deny = (rule: PolicyRuleRef | undefined, reason: string, matched: readonly PolicyRuleRef[] = []) =>
      Object.freeze({
        decision: 'deny' as const,
        ...(rule ? { rule } : {}),
        reason,
        matched,
        quotas: [],
        policy: digest,
      })
    const denied = firstIndex(topDeny, tool)
    if (denied >= 0) {
      const label = `deny[${denied}]`
      return deny({ index: -1, label }, `the policy denies ${quoted} (${label}: "${topDeny[denied].glob}")`)
    }
    if (topAllow && firstIndex(topAllow, tool) < 0)
      return deny({ index: -1, label: 'allow' }, `the policy does not allow ${quoted} (it matches no allow glob)`)

    const resolved = resolve(call.identity)
    const candidates = toolRules(resolved, tool)
    let input: ConditionInput | undefined
    const matched: PolicyRuleRef[] = []
    let granted: PolicyRuleRef | undefined
    let asked: CompiledRule | undefined
    let deadline = topTimeouts.find((t) => t.re.test(tool))?.ms
    let ruleDeadline: number | undefined
    let quotas: PolicyQuotaCheck[] | undefined
    let denier: CompiledRule | undefined
    for (const candidate of candidates) {
      const { rule } = candidate
      if (rule.when !== undefined) {
        input ??= conditionInput(call)
        const verdict = rule.when(input)
        if (verdict === false) continue
        if (verdict !== true)
          return deny(
            rule.ref,
            `the policy denies ${quoted}: the "when" of ${rule.ref.label} could not be decided (${verdict.error})`,
            [...matched, rule.ref],
          )
      }
      matched.push(rule.ref)
      if (candidate.denies && denier === undefined) denier = rule
      if (candidate.allows && rule.who !== undefined && granted === undefined) granted = rule.ref
      if (candidate.asks && asked === undefined) asked = rule
      if (candidate.timeout !== undefined && ruleDeadline === undefined) ruleDeadline = candidate.timeout
      if (rule.rule.quota !== undefined) {
        quotas ??= []
        quotas.push({ rule: rule.ref, quota: rule.rule.quota, key: quotaKey(rule, call.identity) })
      }
    }
    if (denier !== undefined)
      return deny(
        denier.ref,
        denier.rule.reason ?? `the policy denies ${quoted} (${denier.ref.label})`,
        Object.freeze(matched),
      )
    if (call.identity !== undefined && grantsByIdentity) {
      if (!resolved.named)
        return deny(undefined, `the policy has no rule for ${JSON.stringify(call.identity.subject)}: it sees no tools`)
      if (granted === undefined)
        return deny(
          undefined,
          `the policy does not allow ${quoted} to ${JSON.stringify(call.identity.subject)} (no rule for them allows it)`,
          Object.freeze(matched),
        )
    }
    if (ruleDeadline !== undefined) deadline = deadline === undefined ? ruleDeadline : Math.min(deadline, ruleDeadline)
    const topAsked = asked === undefined ? firstIndex(topAsk, tool) : -1
    const base = {
      matched: Object.freeze(matched),
      quotas: Object.freeze(quotas ?? []),
      ...(deadline !== undefined ? { deadlineMs: deadline } : {}),
      policy: digest,
    }
    if (asked !== undefined)
      return Object.freeze({
        decision: 'ask' as const,
        rule: asked.ref,
        reason: asked.rule.reason ?? `the policy asks before ${quoted} (${asked.ref.label})`,
        ...base,
      })
    if (topAsked >= 0) {
      const label = `ask[${topAsked}]`
      return Object.freeze({
        decision: 'ask' as const,
        rule: { index: -1, label },
        reason: `the policy asks before ${quoted} (${label}: "${topAsk[topAsked].glob}")`,
        ...base,
      })
    }
    return Object.freeze({ decision: 'allow' as const, ...(granted ? { rule: granted } : {}), ...base })
  }

  const refusal = (tool: string, identity: PolicyIdentity | undefined): string | undefined => {
    const quoted = JSON.stringify(tool)
    const denied = firstIndex(topDeny, tool)
    if (denied >= 0) return `the policy denies ${quoted} (deny[${denied}]: "${topDeny[denied].glob}")`
    if (topAllow && firstIndex(topAllow, tool) < 0)
      return `the policy does not allow ${quoted} (it matches no allow glob)`
    const resolved = resolve(identity)
    const candidates = toolRules(resolved, tool)
    const denier = candidates.find((candidate) => candidate.denies && candidate.rule.when === undefined)
    if (denier !== undefined) return denier.rule.rule.reason ?? `the policy denies ${quoted} (${denier.rule.ref.label})`
    if (identity !== undefined && grantsByIdentity) {
      if (!resolved.named) return `the policy has no rule for ${JSON.stringify(identity.subject)}: it sees no tools`
      if (!candidates.some((candidate) => candidate.allows && candidate.rule.who !== undefined))
        return `the policy does not allow ${quoted} to ${JSON.stringify(identity.subject)} (no rule for them allows it)`
    }
    return undefined
  }

  const conditional = rules.some((rule) => rule.when !== undefined)
  return Object.freeze({ document: policy, digest, grantsByIdentity, conditional, decide, refusal })
}

function firstIndex(globs: readonly Glob[], name: string): number {
  for (let i = 0; i < globs.length; i++) if (globs[i].re.test(name)) return i
  return -1
}

function whoIdentity(identity: PolicyIdentity): WhoIdentity {
  return {
    subject: identity.subject,
    groups: identity.groups ?? [],
    scopes: identity.scopes ?? [],
    claims: identity.claims ?? {},
  }
}

function quotaKey(rule: CompiledRule, identity: PolicyIdentity | undefined): string {
  const by = rule.rule.quota?.by
  const who =
    by === 'global'
      ? ''
      : by === 'subject'
        ? (identity?.subject ?? '')
        : JSON.stringify([
            identity?.subject ?? '',
            [...new Set(identity?.groups ?? [])].sort(),
            [...new Set(identity?.scopes ?? [])].sort(),
          ])
  return JSON.stringify([rule.ref.label, by, who])
}

/** What a `when` reads: ints as CEL ints, the turn's tools in first-call order. */
function conditionInput(call: PolicyCall): ConditionInput {
  const identity = whoIdentity(call.identity ?? NO_IDENTITY)
  const counts: Record<string, bigint> = Object.create(null)
  for (const [name, count] of Object.entries(call.turn ?? {})) counts[name] = BigInt(Math.trunc(count))
  return {
    tool: call.tool,
    args: call.args === undefined ? null : call.args,
    identity,
    call: { parentTool: call.parentTool ?? '', depth: BigInt(Math.max(0, Math.trunc(call.depth ?? 0))) },
    turn: { tools: Object.keys(counts), counts },
  }
}
