// The policy feature: one document (allow, deny, ask, deadlines, rules with `who`, `when` and
// `quota`) checked, compiled and enforced the same way by the library and the gateway.
export { type CatalogSubject, catalogGlobIssues } from './check-catalog-globs.js'
export { checkPolicyDocument, parsePolicy } from './check-policy.js'
export { checkPolicyRules } from './check-rules.js'
export {
  type CompiledPolicy,
  compileChecked,
  compilePolicy,
  type PolicyCall,
  type PolicyDecision,
  type PolicyQuotaCheck,
  type PolicyRuleRef,
} from './compile-policy.js'
export { regexRisk } from './conditions.js'
export {
  type EnforcePolicyOptions,
  enforcePolicyDocument,
  type PolicyEnforcement,
  withDeadline,
} from './enforce-policy.js'
export { compileGlobs, firstGlob, type Glob, globsRegExp } from './glob.js'
export { NUL_REFUSAL } from './nul-refusal.js'
export { policyDigest } from './policy-digest.js'
export type {
  ClaimValue,
  PolicyDocument,
  PolicyIdentity,
  PolicyInput,
  PolicyQuota,
  PolicyRule,
  PolicyWho,
  PolicyWhoInput,
} from './policy-document.js'
export { MemoryQuotaCounter, type QuotaCounter, type QuotaTake, WINDOW_MS, windowOf } from './quota-counter.js'
export { QuotaExceededError } from './quota-exceeded-error.js'
export { type StoreQuotaCounter, storeQuotaCounter } from './store-quota-counter.js'
export { type WhoIdentity, whoMatcher } from './who.js'
