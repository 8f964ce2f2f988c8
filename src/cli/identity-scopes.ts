// One agent scope per distinct identity, a child of the serving agent: it inherits the top-level
// policy (which applies to everyone) and adds what `policy.rules` decide for that identity, so its
// tool list, guards, approvals, deadlines and presentation are its own, Code Mode sub-calls included.
import { createHash } from 'node:crypto'
import type { Agent } from '../contract/execution.js'
import type { Identity } from '../mcp/identity.js'
import { type AgentHandle, createAgent } from '../runtime/index.js'
import type { PolicyConfig } from './config.js'
import { enforcePolicy, OPEN_DECIDER, type SwappableDecider, swappableDecider } from './policy.js'
import { type CompiledRules, compileRules } from './policy-rules.js'

export interface IdentityScopes {
  /** The scope `identity` is served: the serving agent itself when there is no identity. */
  agentFor(identity: Identity | undefined): Agent
  /** The identity an agent scope was made for, if any. */
  identityOf(agent: Agent | undefined): Identity | undefined
  /** The rules in force (replaced by {@link IdentityScopes.reload}). */
  readonly rules: CompiledRules
  /**
   * Judge by `policy.rules` from now on: every scope made so far takes its identity's new rules
   * (its tool list changes in place, so its clients hear list_changed), and identities the new
   * rules tell apart get scopes of their own on their next request.
   */
  reload(policy: PolicyConfig): void
}

/**
 * The id suffix of an identity's scope: the same on every instance and in every arrival order, so
 * what is kept by agent id in a shared store (standing approvals) follows exactly the identities
 * its rules treat alike, never another token of the same subject.
 */
function digestOf(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16)
}

/** One scope made for an identity, with what a reload swaps in it. */
interface Scope {
  readonly agent: AgentHandle
  identity: Identity
  readonly decider: SwappableDecider
  readonly refresh: () => void
  unpresent: (() => void) | undefined
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
  let rules = compileRules(policy.rules ?? [])
  let byKey = new Map<string, Scope>()
  // Every scope made, by id: one the rules no longer key the same way is taken again by the identity whose key gives its id.
  const byId = new Map<string, Scope>()
  const identities = new WeakMap<object, Identity>()

  /** Give `scope` what the current rules decide for `identity`. */
  const judge = (scope: Scope, identity: Identity) => {
    scope.identity = identity
    identities.set(scope.agent, identity)
    scope.unpresent?.()
    scope.unpresent = undefined
    if (rules.size === 0) {
      scope.decider.set(OPEN_DECIDER)
      return
    }
    const resolved = rules.resolve(identity)
    scope.decider.set({
      refusal: (name) => resolved.refusal(name),
      ask: (name) => resolved.ask(name),
      timeout: (name) => resolved.timeout(name),
      restricts: true,
      asks: true,
      times: true,
    })
    // An identity no rule names sees nothing, not even an empty run_code.
    const mode = resolved.matched.length === 0 ? 'native' : resolved.mode
    if (mode !== undefined) scope.unpresent = scope.agent.ctx.tools.presentAs(mode)
  }

  const agentFor = (identity: Identity | undefined): Agent => {
    if (identity === undefined) return base
    const key = rules.keyOf(identity)
    const known = byKey.get(key)
    if (known) return known.agent
    const id = `${base.id}/${identity.subject}#${digestOf(key)}`
    let scope = byId.get(id)
    if (scope === undefined) {
      const agent = createAgent(base.ctx, { id })
      const decider = swappableDecider(OPEN_DECIDER)
      const refresh = enforcePolicy(agent, decider, names)
      scope = { agent, identity, decider, refresh, unpresent: undefined }
      byId.set(id, scope)
    }
    judge(scope, identity)
    scope.refresh()
    byKey.set(key, scope)
    return scope.agent
  }
  const identityOf = (agent: Agent | undefined) => (agent === undefined ? undefined : identities.get(agent))
  const reload = (next: PolicyConfig) => {
    rules = compileRules(next.rules ?? [])
    const previous = byKey
    byKey = new Map()
    for (const scope of byId.values()) judge(scope, scope.identity)
    for (const scope of previous.values()) {
      const key = rules.keyOf(scope.identity)
      // Kept under its key only while its id still names that key (a shared store keys standing approvals by it).
      if (`${base.id}/${scope.identity.subject}#${digestOf(key)}` === scope.agent.id && !byKey.has(key))
        byKey.set(key, scope)
    }
    for (const scope of byId.values()) scope.refresh()
  }
  return {
    agentFor,
    identityOf,
    get rules() {
      return rules
    },
    reload,
  }
}
