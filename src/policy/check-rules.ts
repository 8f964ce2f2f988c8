// The policy's `rules`: per-identity or everyone's rules, each checked key by key with its path.
import type { ToolPresentationMode } from '../contract/execution.js'
import { isRecord } from '../util/is-record.js'
import { compileCondition } from './conditions.js'
import { NUL_REFUSAL } from './nul-refusal.js'
import type { ClaimValue, PolicyQuota, PolicyRule, PolicyWho } from './policy-document.js'

const WHO_KEYS = ['subject', 'group', 'scope', 'claim'] as const
const RULE_KEYS = [
  'id',
  'who',
  'allow',
  'deny',
  'ask',
  'tools',
  'timeoutMs',
  'mode',
  'when',
  'quota',
  'reason',
] as const
const QUOTA_KEYS = ['calls', 'per', 'by'] as const
const PERIODS: readonly string[] = ['minute', 'hour', 'day']
const QUOTA_BY: readonly string[] = ['subject', 'identity', 'global']
const MODES: readonly string[] = ['native', 'code', 'both']

const SHAPE = '{ id?, who?, allow?, deny?, ask?, tools?, timeoutMs?, mode?, when?, quota?, reason? }'

/** Check `rules` (at `base`, e.g. `policy.rules`); every problem goes to `issues` with its path. */
export function checkPolicyRules(value: unknown, issues: string[], base = 'policy.rules'): PolicyRule[] {
  if (!Array.isArray(value)) {
    issues.push(`${base}: expected an array of ${SHAPE}`)
    return []
  }
  const rules: PolicyRule[] = []
  const ids = new Map<string, number>()
  value.forEach((item, i) => {
    const at = `${base}[${i}]`
    if (!isRecord(item)) {
      issues.push(`${at}: expected an object ${SHAPE}`)
      return
    }
    unknown(item, at, RULE_KEYS, issues)
    const rule: PolicyRule = {}
    if (item.who !== undefined) rule.who = checkWho(item.who, `${at}.who`, issues)
    else {
      // Grants belong to identities (or the top-level allow): a rule for everyone cannot grant.
      for (const key of ['allow', 'mode'] as const)
        if (item[key] !== undefined)
          issues.push(
            `${at}.${key}: a rule without "who" is for everyone and cannot set "${key}" (name "who", or use the top-level "allow")`,
          )
    }
    if (item.id !== undefined) {
      if (typeof item.id !== 'string' || item.id === '' || item.id.length > 200 || hasControl(item.id))
        issues.push(`${at}.id: expected a non-empty string of at most 200 characters without control characters`)
      else if (ids.has(item.id)) issues.push(`${at}.id: "${item.id}" is already the id of rules[${ids.get(item.id)}]`)
      else {
        ids.set(item.id, i)
        rule.id = item.id
      }
    }
    if (item.reason !== undefined) {
      if (typeof item.reason === 'string' && item.reason !== '' && item.reason.length <= 2000) rule.reason = item.reason
      else issues.push(`${at}.reason: expected a non-empty string of at most 2000 characters`)
    }
    if (item.when !== undefined) {
      if (typeof item.when !== 'string' || item.when.trim() === '')
        issues.push(`${at}.when: expected a CEL expression (a non-empty string)`)
      else {
        const compiled = compileCondition(item.when)
        if (typeof compiled !== 'function') issues.push(`${at}.when: ${compiled.problem}`)
        rule.when = item.when
        for (const key of ['timeoutMs', 'mode'] as const)
          if (item[key] !== undefined)
            issues.push(`${at}.${key}: a rule with "when" cannot set "${key}" (put it in a rule without "when")`)
      }
    }
    if (item.quota !== undefined) {
      const quota = checkQuota(item.quota, `${at}.quota`, issues)
      if (quota !== undefined) rule.quota = quota
    }
    for (const key of ['allow', 'deny', 'ask', 'tools'] as const) {
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
    if (
      (rule.when !== undefined || rule.quota !== undefined) &&
      ![rule.allow, rule.deny, rule.ask, rule.tools].some((l) => l?.length)
    )
      issues.push(
        `${at}: a rule with "when" or "quota" needs tool-name globs ("allow", "deny", "ask" or "tools") to apply to`,
      )
    rules.push(rule)
  })
  return rules
}

function checkQuota(value: unknown, at: string, issues: string[]): PolicyQuota | undefined {
  if (!isRecord(value)) {
    issues.push(`${at}: expected an object { calls, per, by }`)
    return undefined
  }
  unknown(value, at, QUOTA_KEYS, issues)
  const before = issues.length
  const { calls, per, by } = value
  if (!(typeof calls === 'number' && Number.isSafeInteger(calls) && calls > 0))
    issues.push(`${at}.calls: expected a positive integer, got ${JSON.stringify(calls)}`)
  if (typeof per !== 'string' || !PERIODS.includes(per))
    issues.push(`${at}.per: expected "minute", "hour" or "day", got ${JSON.stringify(per)}`)
  if (typeof by !== 'string' || !QUOTA_BY.includes(by))
    issues.push(`${at}.by: expected "subject", "identity" or "global", got ${JSON.stringify(by)}`)
  if (issues.length > before) return undefined
  return { calls, per, by } as PolicyQuota
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

/** Whether `text` holds a control character (U+0000 to U+001F), which an id would carry into logs. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true
  return false
}
