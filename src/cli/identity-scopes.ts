// One agent scope per distinct identity, a child of the serving agent: it inherits the top-level
// policy (which applies to everyone) and adds what `policy.rules` decide for that identity, so its
// tool list, guards, approvals, deadlines and presentation are its own, Code Mode sub-calls included.
import { createHash } from 'node:crypto'
import type { Agent } from '../contract/execution.js'
import type { Identity } from '../mcp/identity.js'
import { type AgentHandle, createAgent } from '../runtime/index.js'
import type { PolicyConfig } from './config.js'
import { enforcePolicy } from './policy.js'
import { type CompiledRules, compileRules } from './policy-rules.js'

export interface IdentityScopes {
  /** The scope `identity` is served: the serving agent itself when there is no identity. */
  agentFor(identity: Identity | undefined): Agent
  /** The identity an agent scope was made for, if any. */
  identityOf(agent: Agent | undefined): Identity | undefined
  readonly rules: CompiledRules
}

/**
 * The id suffix of an identity's scope: the same on every instance and in every arrival order, so
 * what is kept by agent id in a shared store (standing approvals) follows exactly the identities
 * its rules treat alike, never another token of the same subject.
 */
function digestOf(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16)
}

/**
 * Scopes for identities under `base`. Without `policy.rules` an identity still gets a scope of its
 * own (with no further restriction) so that its calls are told apart in the journal.
 */
export function identityScopes(
  base: AgentHandle,
  policy: PolicyConfig,
  names: () => readonly string[],
): IdentityScopes {
  const rules = compileRules(policy.rules ?? [])
  const hasRules = rules.size > 0
  const byKey = new Map<string, AgentHandle>()
  const identities = new WeakMap<object, Identity>()
  const agentFor = (identity: Identity | undefined): Agent => {
    if (identity === undefined) return base
    const key = rules.keyOf(identity)
    const known = byKey.get(key)
    if (known) return known
    const id = `${base.id}/${identity.subject}#${digestOf(key)}`
    const agent = createAgent(base.ctx, { id })
    identities.set(agent, identity)
    if (hasRules) {
      const resolved = rules.resolve(identity)
      enforcePolicy(
        agent,
        {
          refusal: (name) => resolved.refusal(name),
          ask: (name) => resolved.ask(name),
          timeout: (name) => resolved.timeout(name),
          restricts: true,
          asks: true,
          times: true,
        },
        names,
      )
      // An identity no rule names sees nothing, not even an empty run_code.
      const mode = resolved.matched.length === 0 ? 'native' : resolved.mode
      if (mode !== undefined) agent.ctx.tools.presentAs(mode)
    }
    byKey.set(key, agent)
    return agent
  }
  const identityOf = (agent: Agent | undefined) => (agent === undefined ? undefined : identities.get(agent))
  return { agentFor, identityOf, rules }
}
