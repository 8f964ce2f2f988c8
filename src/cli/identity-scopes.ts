// One agent scope per distinct identity, a child of the serving agent: it inherits the top-level
// policy (which applies to everyone) and adds what `policy.rules` decide for that identity, so its
// tool list, guards, approvals, deadlines and presentation are its own, Code Mode sub-calls included.
// The scopes are a bounded cache: a flood of distinct callers cannot grow memory without end.
import { createHash } from 'node:crypto'
import type { Agent, ToolExecution } from '../contract/execution.js'
import type { Identity } from '../mcp/identity.js'
import { type AgentHandle, createAgent } from '../runtime/index.js'
import type { PolicyConfig } from './config.js'
import { enforcePolicy } from './policy.js'
import { type CompiledRules, compileRules } from './policy-rules.js'

/** How many identity scopes are kept at most (idle ones beyond it are dropped, least recently used first). */
export const MAX_IDENTITY_SCOPES = 1000

export interface IdentityScopes {
  /** The scope `identity` is served: the serving agent itself when there is no identity. */
  agentFor(identity: Identity | undefined): Agent
  /** The identity an agent scope was made for, if any. */
  identityOf(agent: Agent | undefined): Identity | undefined
  readonly rules: CompiledRules
  /** How many identity scopes are kept now. */
  size(): number
}

/**
 * The id suffix of an identity's scope: the same on every instance and in every arrival order, so
 * what is kept by agent id in a shared store (standing approvals) follows exactly the identities
 * its rules treat alike, never another token of the same subject.
 */
function digestOf(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16)
}

interface Kept {
  readonly key: string
  readonly agent: AgentHandle
  /** Calls of this scope (sub-calls included) between their start and their result. */
  running: number
}

/**
 * Scopes for identities under `base`. Without `policy.rules` an identity still gets a scope of its
 * own (with no further restriction) so that its calls are told apart in the journal.
 *
 * At most `max` scopes are kept: past it, the least recently served scope with no call running is
 * disposed. A scope holds nothing that cannot be made again: its id is a digest of what its rules
 * read, so standing approvals kept by agent id (the serve's standing store) answer the new scope.
 */
export function identityScopes(
  base: AgentHandle,
  policy: PolicyConfig,
  names: () => readonly string[],
  max = MAX_IDENTITY_SCOPES,
): IdentityScopes {
  const rules = compileRules(policy.rules ?? [])
  const hasRules = rules.size > 0
  // In recency order: a served scope moves to the end, eviction starts at the front.
  const byKey = new Map<string, Kept>()
  const byAgent = new WeakMap<object, Kept>()
  const identities = new WeakMap<object, Identity>()
  // Which scopes have calls in flight: the serving agent sees its children's calls.
  const track = (exec: Readonly<ToolExecution>, delta: number) => {
    const kept = exec.agent === undefined ? undefined : byAgent.get(exec.agent)
    if (kept !== undefined) kept.running = Math.max(0, kept.running + delta)
  }
  base.ctx.on('tools/call', (exec) => track(exec, 1))
  base.ctx.on('tools/result', (exec) => track(exec, -1))

  const evict = (fresh: Kept) => {
    for (const kept of byKey.values()) {
      if (byKey.size <= max) return
      if (kept.running > 0 || kept === fresh) continue
      byKey.delete(kept.key)
      byAgent.delete(kept.agent)
      void kept.agent.dispose().catch(() => {})
    }
  }

  const create = (identity: Identity, key: string): AgentHandle => {
    const agent = createAgent(base.ctx, { id: `${base.id}/${identity.subject}#${digestOf(key)}` })
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
    return agent
  }

  const agentFor = (identity: Identity | undefined): Agent => {
    if (identity === undefined) return base
    const key = rules.keyOf(identity)
    const known = byKey.get(key)
    if (known) {
      byKey.delete(key)
      byKey.set(key, known)
      return known.agent
    }
    const kept: Kept = { key, agent: create(identity, key), running: 0 }
    byKey.set(key, kept)
    byAgent.set(kept.agent, kept)
    evict(kept)
    return kept.agent
  }
  const identityOf = (agent: Agent | undefined) => (agent === undefined ? undefined : identities.get(agent))
  return { agentFor, identityOf, rules, size: () => byKey.size }
}
