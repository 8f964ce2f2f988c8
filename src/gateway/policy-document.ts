// The gateway's `policy` run by the policy module, as the library runs it: every call of the serving
// agent and of each identity's scope (Code Mode sub-calls included) is decided over its arguments,
// caller, parent call and turn; quotas are counted in this process, or in the store once it is open.
// The static layer (policy.ts, policy-rules.ts) still hides what is refused whatever the arguments.
import { RUN_CODE_NAME } from '../code-mode/constants.js'
import type { Agent, ToolExecution } from '../contract/execution.js'
import type { JournalPolicyDecision } from '../journal/records.js'
import {
  compileChecked,
  enforcePolicyDocument,
  MemoryQuotaCounter,
  type PolicyEnforcement,
  type QuotaCounter,
} from '../policy/index.js'
import { SEARCH_TOOLS_NAME } from '../search/tool-search.js'
import type { PolicyConfig } from './config.js'

/** The gateway's policy enforcement, which a reload replaces whole. */
export interface GatewayPolicy extends PolicyEnforcement {
  /** Enforce `policy` for new calls; calls already decided keep their decision for the journal. */
  swap(policy: PolicyConfig): void
}

/** Install `policy` on the serving `agent`; `identityOf` names the caller of an identity's scope. */
export function enforceGatewayPolicy(
  agent: Agent,
  policy: PolicyConfig,
  identityOf: (agent: Agent | undefined) => { readonly subject: string } | undefined,
): GatewayPolicy {
  // Quota counts outlive a reload: the same counter (this process's, or the store's) serves each policy.
  let counter: QuotaCounter = new MemoryQuotaCounter()
  const enforce = (document: PolicyConfig) => {
    const enforcement = enforcePolicyDocument(agent.ctx, compileChecked(document), {
      identityOf,
      quotas: counter,
      exempt: (name) => name === RUN_CODE_NAME || name === SEARCH_TOOLS_NAME,
      // The static layer applies the deadlines (they hold without arguments).
      deadlines: false,
    })
    return enforcement
  }
  let current = enforce(policy)
  // The one before the last reload: its calls in flight are still named by it in the journal.
  let previous: PolicyEnforcement | undefined
  return {
    get policy() {
      return current.policy
    },
    decisionOf: (token) => current.decisionOf(token) ?? previous?.decisionOf(token),
    explain: (call) => current.explain(call),
    useQuotas(next) {
      counter = next
      current.useQuotas(next)
    },
    dispose() {
      current.dispose()
    },
    swap(next) {
      const fresh = enforce(next)
      current.dispose()
      previous = current
      current = fresh
    },
  }
}

/** The journal's view of a call's decision. */
export function journalDecision(
  enforcement: PolicyEnforcement | undefined,
): ((exec: Readonly<ToolExecution>) => JournalPolicyDecision | undefined) | undefined {
  if (enforcement === undefined) return undefined
  return (exec) => {
    const decision = enforcement.decisionOf(exec.token)
    if (decision === undefined) return undefined
    return {
      decision: decision.decision,
      ...(decision.rule ? { rule: decision.rule.label } : {}),
      digest: decision.policy,
    }
  }
}
