// One agent scope per distinct identity, a child of the serving agent: it inherits the top-level
// policy (which applies to everyone) and adds what `policy.rules` decide for that identity, so its
// tool list, guards, approvals, deadlines and presentation are its own, Code Mode sub-calls included.
// The scopes are a bounded cache: a flood of distinct callers cannot grow memory without end.
import { createHash } from 'node:crypto'
import type { Agent, ToolExecution } from '../contract/execution.js'
import type { Identity } from '../mcp/gateway.js'
import { type AgentHandle, createAgent, directListener } from '../runtime/index.js'
import type { PolicyConfig } from './config.js'
import { enforcePolicy, OPEN_DECIDER, type SwappableDecider, swappableDecider } from './policy.js'
import { type CompiledRules, compileRules } from './policy-rules.js'

/** How many identity scopes are kept at most (idle ones beyond it are dropped, least recently used first). */
export const MAX_IDENTITY_SCOPES = 1000

export interface IdentityScopes {
  /** The scope `identity` is served: the serving agent itself when there is no identity. */
  agentFor(identity: Identity | undefined): Agent
  /** The identity an agent scope was made for, if any. */
  identityOf(agent: Agent | undefined): Identity | undefined
  /** The rules in force (replaced by {@link IdentityScopes.reload}). */
  readonly rules: CompiledRules
  /** How many identity scopes are kept now. */
  size(): number
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
  let rules = compileRules(policy.rules ?? [])
  let byKey = new Map<string, Scope>()
  // Every kept scope by id, in recency order: a served scope moves to the end, eviction starts at
  // the front. One the rules no longer key the same way is taken again by the identity whose key gives its id.
  const byId = new Map<string, Scope>()
  const byAgent = new WeakMap<object, Scope>()
  const identities = new WeakMap<object, Identity>()
  // Which scopes have calls in flight: the serving agent sees its children's calls.
  const track = (exec: Readonly<ToolExecution>, delta: number) => {
    const scope = exec.agent === undefined ? undefined : byAgent.get(exec.agent)
    if (scope !== undefined) scope.running = Math.max(0, scope.running + delta)
  }
  base.ctx.on(
    'tools/call',
    directListener((exec) => track(exec, 1)),
  )
  base.ctx.on(
    'tools/result',
    directListener((exec) => track(exec, -1)),
  )

  const evict = (fresh: Scope) => {
    for (const [id, scope] of byId) {
      if (byId.size <= max) return
      if (scope.running > 0 || scope === fresh) continue
      byId.delete(id)
      for (const [key, keyed] of byKey) if (keyed === scope) byKey.delete(key)
      byAgent.delete(scope.agent)
      void scope.agent.dispose().catch(() => {})
    }
  }

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

  const touch = (id: string, scope: Scope) => {
    byId.delete(id)
    byId.set(id, scope)
  }

  const agentFor = (identity: Identity | undefined): Agent => {
    if (identity === undefined) return base
    const key = rules.keyOf(identity)
    const known = byKey.get(key)
    if (known) {
      touch(known.agent.id, known)
      return known.agent
    }
    const id = `${base.id}/${identity.subject}#${digestOf(key)}`
    let scope = byId.get(id)
    if (scope === undefined) {
      const agent = createAgent(base.ctx, { id })
      const decider = swappableDecider(OPEN_DECIDER)
      const refresh = enforcePolicy(agent, decider, names)
      scope = { agent, identity, decider, refresh, unpresent: undefined, running: 0 }
      byAgent.set(agent, scope)
    }
    touch(id, scope)
    judge(scope, identity)
    scope.refresh()
    byKey.set(key, scope)
    evict(scope)
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
    size: () => byId.size,
    reload,
  }
}
