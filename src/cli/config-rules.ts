// The config's `policy.rules`: per-identity rules, each checked key by key with its path.
import type { ToolPresentationMode } from '../contract/execution.js'
import { isRecord } from '../util/is-record.js'
import { NUL_REFUSAL } from './config-nul.js'

/** A claim value a rule compares with: JSON scalars only (compared with `===`). */
export type ClaimValue = string | number | boolean | null

/**
 * Whom a rule is for. Every key given must match (and); a key's list matches when any entry does
 * (or). `claim` compares the token's claims: each named claim must equal one of the listed values,
 * or, when the claim is an array, contain one of them.
 */
export interface PolicyWho {
  subject?: string[]
  group?: string[]
  scope?: string[]
  claim?: Record<string, ClaimValue[]>
}

/** One rule of `policy.rules`. */
export interface PolicyRule {
  who: PolicyWho
  /** Tool-name globs this rule grants (the identity sees the union of the grants of its rules). */
  allow?: string[]
  /** Tool-name globs hidden and refused for this identity, whatever any rule allows. */
  deny?: string[]
  /** Tool-name globs whose calls by this identity need approval. */
  ask?: string[]
  /** Cooperative deadline per tool-name glob for this identity's calls, in ms. */
  timeoutMs?: Record<string, number>
  /** How this identity sees the tools: native, code (only run_code) or both. */
  mode?: ToolPresentationMode
}

const WHO_KEYS = ['subject', 'group', 'scope', 'claim'] as const
const RULE_KEYS = ['who', 'allow', 'deny', 'ask', 'timeoutMs', 'mode'] as const
const MODES: readonly string[] = ['native', 'code', 'both']

/** Check `policy.rules`; every problem goes to `issues` with its path. */
export function checkPolicyRules(value: unknown, issues: string[]): PolicyRule[] {
  if (!Array.isArray(value)) {
    issues.push('policy.rules: expected an array of { who, allow?, deny?, ask?, timeoutMs?, mode? }')
    return []
  }
  const rules: PolicyRule[] = []
  value.forEach((item, i) => {
    const at = `policy.rules[${i}]`
    if (!isRecord(item)) {
      issues.push(`${at}: expected an object { who, allow?, deny?, ask?, timeoutMs?, mode? }`)
      return
    }
    unknown(item, at, RULE_KEYS, issues)
    const rule: PolicyRule = { who: checkWho(item.who, `${at}.who`, issues) }
    for (const key of ['allow', 'deny', 'ask'] as const) {
      const list = globList(item[key], `${at}.${key}`, issues)
      if (list !== undefined) rule[key] = list
    }
    if (item.timeoutMs !== undefined) {
      if (!isRecord(item.timeoutMs)) issues.push(`${at}.timeoutMs: expected an object of { toolGlob: milliseconds }`)
      else {
        for (const [glob, ms] of Object.entries(item.timeoutMs))
          if (!(typeof ms === 'number' && ms > 0 && Number.isFinite(ms)))
            issues.push(`${at}.timeoutMs.${glob}: expected a positive number of milliseconds`)
        rule.timeoutMs = item.timeoutMs as Record<string, number>
      }
    }
    if (item.mode !== undefined) {
      if (typeof item.mode === 'string' && MODES.includes(item.mode)) rule.mode = item.mode as ToolPresentationMode
      else issues.push(`${at}.mode: expected "native", "code" or "both", got ${JSON.stringify(item.mode)}`)
    }
    rules.push(rule)
  })
  return rules
}

function checkWho(value: unknown, at: string, issues: string[]): PolicyWho {
  const who: PolicyWho = {}
  if (!isRecord(value)) {
    issues.push(`${at}: expected an object { subject?, group?, scope?, claim? } naming at least one of them`)
    return who
  }
  unknown(value, at, WHO_KEYS, issues)
  for (const key of ['subject', 'group', 'scope'] as const) {
    const raw = value[key]
    if (raw === undefined) continue
    const list = typeof raw === 'string' ? [raw] : raw
    if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === 'string' && s !== ''))
      issues.push(`${at}.${key}: expected a non-empty string or a non-empty array of them`)
    else if (list.some((s: string) => s.includes('\u0000')))
      issues.push(
        `${at}.${key}${typeof raw === 'string' ? '' : `[${list.findIndex((s: string) => s.includes('\u0000'))}]`}: ${NUL_REFUSAL}`,
      )
    else who[key] = list as string[]
  }
  if (value.claim !== undefined) {
    if (!isRecord(value.claim) || Object.keys(value.claim).length === 0)
      issues.push(`${at}.claim: expected an object { claimName: value or [values] } with at least one claim`)
    else {
      const claim: Record<string, ClaimValue[]> = {}
      for (const [name, raw] of Object.entries(value.claim)) {
        const list = Array.isArray(raw) ? raw : [raw]
        if (list.length === 0 || !list.every(isScalar))
          issues.push(`${at}.claim.${name}: expected a string, number, boolean or null, or a non-empty array of them`)
        else claim[name] = list as ClaimValue[]
      }
      who.claim = claim
    }
  }
  if (Object.keys(value).length === 0)
    issues.push(`${at}: names no one (give at least one of "subject", "group", "scope", "claim")`)
  return who
}

function globList(value: unknown, at: string, issues: string[]): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value)) {
    issues.push(`${at}: expected an array of tool-name globs`)
    return undefined
  }
  value.forEach((glob, i) => {
    if (typeof glob !== 'string' || glob === '') issues.push(`${at}[${i}]: expected a non-empty tool-name glob`)
  })
  return value as string[]
}

function isScalar(value: unknown): value is ClaimValue {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value)
}

function unknown(value: Record<string, unknown>, at: string, known: readonly string[], issues: string[]): void {
  for (const key of Object.keys(value))
    if (!known.includes(key))
      issues.push(`${at}.${key}: unknown key (expected ${known.map((k) => `"${k}"`).join(', ')})`)
}
