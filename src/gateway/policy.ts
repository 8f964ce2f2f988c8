// The gateway's allow/deny/ask rules and per-glob deadlines, applied to the serving agent's scope
// so they hold for direct calls and Code Mode sub-calls alike.
import { RUN_CODE_NAME } from '../code-mode/constants.js'
import type { Agent } from '../contract/execution.js'
import { globsRegExp, withDeadline } from '../policy/index.js'
import { AgentDisposedError, directListener } from '../runtime/index.js'
import { SEARCH_TOOLS_NAME } from '../search/tool-search.js'
import type { PolicyConfig } from './config.js'

export { globsRegExp }

/** Compiled globs: every call (and every listed resource) is checked against the same few. */
const compiled = new Map<string, (name: string) => boolean>()

/** A tool-name glob: `*` is any run of characters, `?` one character. */
export function nameGlob(glob: string): (name: string) => boolean {
  let test = compiled.get(glob)
  if (test === undefined) {
    const re = globsRegExp([glob]) as RegExp
    test = (name) => re.test(name)
    // Bounded: the globs come from the config, but a long-lived host may build many policies.
    if (compiled.size < 1000) compiled.set(glob, test)
  }
  return test
}

function firstMatch(globs: readonly string[] | undefined, name: string): string | undefined {
  return globs?.find((glob) => nameGlob(glob)(name))
}

/** Why the policy refuses `name`, or undefined. `run_code` itself is never filtered (its sub-calls are). */
export function refusal(policy: PolicyConfig, name: string): string | undefined {
  if (name === RUN_CODE_NAME) return undefined
  const denied = firstMatch(policy.deny, name)
  if (denied !== undefined) return `the gateway policy denies "${name}" (deny: "${denied}")`
  if (policy.allow && firstMatch(policy.allow, name) === undefined)
    return `the gateway policy does not allow "${name}" (it matches no allow glob)`
  return undefined
}

/** What a policy decides name by name; {@link enforcePolicy} installs it on an agent scope. */
export interface PolicyDecider {
  /** Why `name` is hidden and refused, or undefined. */
  refusal(name: string): string | undefined
  /** The ask glob that makes a call of `name` need approval, or undefined. */
  ask(name: string): string | undefined
  /** The deadline of a call of `name`, or undefined. */
  timeout(name: string): { readonly glob: string; readonly ms: number } | undefined
  /** Whether anything may be refused (else no hiding is installed). */
  readonly restricts: boolean
  readonly asks: boolean
  readonly times: boolean
}

/** The top-level policy as a decider. */
export function configDecider(policy: PolicyConfig): PolicyDecider {
  const budgets = policy.timeoutMs ? Object.entries(policy.timeoutMs) : []
  // A rule for everyone that denies without `when` refuses whatever the call: hidden like the top level's deny.
  const everyone = (policy.rules ?? []).flatMap((rule, index) =>
    rule.who === undefined && rule.when === undefined
      ? (rule.deny ?? []).map((glob) => ({ glob, label: rule.id ?? `rules[${index}]` }))
      : [],
  )
  const everyoneRefusal = (name: string) => {
    const denied = everyone.find(({ glob }) => nameGlob(glob)(name))
    return denied && `the gateway policy denies "${name}" (${denied.label}: "${denied.glob}")`
  }
  return {
    refusal: (name) => refusal(policy, name) ?? (name === RUN_CODE_NAME ? undefined : everyoneRefusal(name)),
    ask: (name) => firstMatch(policy.ask, name),
    timeout(name) {
      const budget = budgets.find(([glob]) => nameGlob(glob)(name))
      return budget && { glob: budget[0], ms: budget[1] }
    },
    restricts: policy.allow !== undefined || policy.deny !== undefined || everyone.length > 0,
    asks: (policy.ask?.length ?? 0) > 0,
    times: budgets.length > 0,
  }
}

/**
 * Install the policy on the serving agent: refused tools are hidden (a restriction recomputed as
 * tools come and go) and refused by a guard; `ask` globs turn into approval requests; `timeoutMs`
 * globs get a cooperative deadline. `names()` lists every registered tool name.
 */
export function applyPolicy(agent: Agent, policy: PolicyConfig, names: () => readonly string[]): void {
  enforcePolicy(agent, configDecider(policy), names)
}

/** A decider whose answers can be replaced while it is installed (a config reload). */
export interface SwappableDecider extends PolicyDecider {
  /** Answer as `next` from now on: calls already past the guard, the ask and the deadline keep what they got. */
  set(next: PolicyDecider): void
}

/**
 * A decider that asks whichever one was set last. Every part is installed (a reload may add
 * restrictions, asks or deadlines), each passing everything through while the current one has none.
 */
export function swappableDecider(initial: PolicyDecider): SwappableDecider {
  let current = initial
  return {
    refusal: (name) => (current.restricts ? current.refusal(name) : undefined),
    ask: (name) => (current.asks ? current.ask(name) : undefined),
    timeout: (name) => (current.times ? current.timeout(name) : undefined),
    restricts: true,
    asks: true,
    times: true,
    set(next) {
      current = next
    },
  }
}

/** A decider that lets everything through. */
export const OPEN_DECIDER: PolicyDecider = {
  refusal: () => undefined,
  ask: () => undefined,
  timeout: () => undefined,
  restricts: false,
  asks: false,
  times: false,
}

/**
 * Install `decider` on `agent`'s scope (see {@link applyPolicy}); it holds for Code Mode sub-calls too.
 * Returns how to recompute the hidden tools after the decider's answers changed (a reload).
 */
export function enforcePolicy(agent: Agent, decider: PolicyDecider, names: () => readonly string[]): () => void {
  const ctx = agent.ctx
  const tools = ctx.tools
  // run_code and search_tools reach only what the scope may call or see, so no policy refuses them
  // (the runtime refuses to restrict the finder too): listed, they are callable.
  const refuse = (name: string) =>
    name === RUN_CODE_NAME || name === SEARCH_TOOLS_NAME ? undefined : decider.refusal(name)
  tools.guard((exec) => refuse(exec.name))

  let hidden = ''
  let unrestrict: (() => void) | undefined
  const hide = () => {
    const refused = names()
      .filter((name) => refuse(name) !== undefined && tools.get(name) !== undefined)
      .sort()
    const key = refused.join('\n')
    if (key === hidden) return
    hidden = key
    const previous = unrestrict
    unrestrict = refused.length ? tools.restrict({ deny: refused }) : undefined
    previous?.()
  }
  if (decider.restricts) {
    hide()
    // A burst of changes (an upstream's tools registered at start, or all removed at close or on a
    // reconnect) hides once, after it: each pass reads every name, so a pass per change made the
    // burst quadratic (3,000 tools took 0.9 s to close). Calls need not wait for it: the guard
    // above refuses a denied tool whatever a listing shows.
    let closed = false
    let pending = false
    ctx.effect(
      () => () => {
        closed = true
      },
      'gateway policy: hidden tools',
    )
    ctx.on('tools/change', () => {
      if (closed || pending) return
      pending = true
      queueMicrotask(() => {
        pending = false
        if (closed) return
        try {
          hide()
        } catch (error) {
          // The agent was disposed after the change (its effects end later): nothing left to hide.
          if (!(error instanceof AgentDisposedError)) throw error
        }
      })
    })
  }

  if (decider.asks) {
    // Not async: a tool nothing asks before hands on the next listener's own promise.
    ctx.on(
      'tools/pre-execute',
      directListener((exec, next) => {
        const glob = decider.ask(exec.name)
        if (glob === undefined) return next()
        return Promise.resolve(next()).then((decision) =>
          decision.kind === 'allow'
            ? { kind: 'ask', reason: `the gateway policy asks before "${exec.name}" (ask: "${glob}")` }
            : decision,
        )
      }),
    )
  }

  if (decider.times) {
    ctx.on(
      'tools/execute',
      directListener((exec, next) => {
        const budget = decider.timeout(exec.name)
        if (budget === undefined || exec.signal.aborted) return next()
        return withDeadline(exec, budget.ms, next)
      }),
    )
  }
  return decider.restricts ? hide : () => {}
}
