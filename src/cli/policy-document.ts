// The gateway's `policy` run by the policy module, as the library runs it: every call of the serving
// agent and of each identity's scope (Code Mode sub-calls included) is decided over its arguments,
// caller, parent call and turn; quotas are counted in this process, or in the store once it is open.
// The static layer (policy.ts, policy-rules.ts) still hides what is refused whatever the arguments.
import { RUN_CODE_NAME } from '../code-mode/constants.js'
import type { Agent, ToolExecution } from '../contract/execution.js'
import type { JournalPolicyDecision } from '../journal/records.js'
import { compileChecked, enforcePolicyDocument, MemoryQuotaCounter, type PolicyEnforcement } from '../policy/index.js'
import { SEARCH_TOOLS_NAME } from '../search/tool-search.js'
import type { PolicyConfig } from './config.js'

/** Install `policy` on the serving `agent`; `identityOf` names the caller of an identity's scope. */
export function enforceGatewayPolicy(
  agent: Agent,
  policy: PolicyConfig,
  identityOf: (agent: Agent | undefined) => { readonly subject: string } | undefined,
): PolicyEnforcement {
  return enforcePolicyDocument(agent.ctx, compileChecked(policy), {
    identityOf,
    quotas: new MemoryQuotaCounter(),
    exempt: (name) => name === RUN_CODE_NAME || name === SEARCH_TOOLS_NAME,
    // The static layer applies the deadlines (they hold without arguments).
    deadlines: false,
  })
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
