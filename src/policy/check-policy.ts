// The policy document's check, the same for the gateway's config file and the library's options:
// every problem is collected with its path, and a `when` that does not compile is one of them.
import { ConfigError } from '../errors/config-error.js'
import { isRecord } from '../util/is-record.js'
import { catalogGlobIssues } from './check-catalog-globs.js'
import { checkPolicyRules } from './check-rules.js'
import type { PolicyDocument } from './policy-document.js'

const KEYS = ['allow', 'deny', 'ask', 'timeoutMs', 'rules'] as const

/** Check a policy document at `at` (`policy` in a config file); every problem goes to `issues`. */
export function checkPolicyDocument(value: unknown, issues: string[], at = 'policy'): PolicyDocument {
  const policy: PolicyDocument = {}
  if (!isRecord(value)) {
    issues.push(`${at}: expected an object { allow?, deny?, ask?, timeoutMs?, rules? }`)
    return policy
  }
  for (const key of Object.keys(value))
    if (!(KEYS as readonly string[]).includes(key))
      issues.push(`${at}.${key}: unknown key (expected ${KEYS.map((k) => `"${k}"`).join(', ')})`)
  issues.push(...catalogGlobIssues(value).map((issue) => (at === 'policy' ? issue : issue.replace(/^policy/, at))))
  if (value.rules !== undefined) policy.rules = checkPolicyRules(value.rules, issues, `${at}.rules`)
  for (const key of ['allow', 'deny', 'ask'] as const) {
    const list = value[key]
    if (list === undefined) continue
    if (!Array.isArray(list)) {
      issues.push(`${at}.${key}: expected an array of tool-name globs`)
      continue
    }
    list.forEach((glob, i) => {
      if (typeof glob !== 'string' || glob === '')
        issues.push(`${at}.${key}[${i}]: expected a non-empty tool-name glob`)
    })
    policy[key] = list as string[]
  }
  if (value.timeoutMs !== undefined) {
    if (!isRecord(value.timeoutMs)) issues.push(`${at}.timeoutMs: expected an object of { toolGlob: milliseconds }`)
    else {
      for (const [glob, ms] of Object.entries(value.timeoutMs))
        if (!(typeof ms === 'number' && ms > 0 && Number.isFinite(ms)))
          issues.push(`${at}.timeoutMs.${glob}: expected a positive number of milliseconds`)
      policy.timeoutMs = value.timeoutMs as Record<string, number>
    }
  }
  return policy
}

/** A checked policy document, or a {@link ConfigError} at `where` listing every problem. */
export function parsePolicy(value: unknown, where: string): PolicyDocument {
  const issues: string[] = []
  const policy = checkPolicyDocument(value, issues)
  if (issues.length) throw new ConfigError(where, issues)
  return policy
}
