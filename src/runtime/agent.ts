/// <reference lib="esnext.disposable" preserve="true" />
import type { Context } from 'cordis'
import type { Agent, AgentIdentity } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { Scope, scopeSymbol } from './scope.js'
import { coreOf, type ToolRuntimeCore } from './service.js'

/** An agent with its own lifetime: disposing it disposes its registrations, restrictions, guards and listeners. */
export interface AgentHandle extends Agent {
  /**
   * Dispose the agent: everything registered through `agent.ctx` goes (agents created from it too);
   * `register`, `restrict` and `execute` for it (and `run_code`) fail with `AGENT_DISPOSED` from now
   * on; its running tool bodies are aborted through their signal and still produce one result each.
   * Idempotent.
   */
  dispose(): Promise<void>
  /** `await using agent = createAgent(ctx, { id })` disposes at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Create an agent scope. From a plain context the agent's parent is the global layer; from
 * another agent's `ctx` (or a context derived from it) it is that agent's child.
 */
export function createAgent(ctx: Context, options: { id: string; identity?: AgentIdentity }): AgentHandle {
  const id = options?.id
  if (typeof id !== 'string' || id.length === 0)
    throw new ConfigError('createAgent(ctx, options).id', 'expected a non-empty string')
  const identity = options.identity === undefined ? undefined : checkIdentity(options.identity)
  const tools = ctx.get('tools', false) as ToolRuntimeCore | undefined
  if (!tools)
    throw new ConfigError(
      'createAgent(ctx)',
      'the tools service is not available on this context; load ToolRuntime first',
    )
  const core = tools[coreOf]
  const parent = core.scopeOfContext(ctx)
  let scope: Scope | undefined
  const retire = () => {
    if (scope) core.lifetime.disposeScope(scope)
  }
  // A fiber of its own gives the agent a lifetime; it is usable at once, before it finishes loading.
  // Unloading it (directly, with a parent agent, or with the runtime) retires the scope.
  const fiber = ctx.inject(['tools'], (fiberCtx) => {
    fiberCtx.effect(() => retire, `agent ${id} lifetime`)
  })
  const agentCtx = fiber.ctx.extend({ [scopeSymbol]: undefined as unknown })
  let disposing: Promise<void> | undefined
  const dispose = (): Promise<void> => {
    disposing ??= (async () => {
      retire()
      await fiber.dispose()
    })()
    return disposing
  }
  const agent: AgentHandle = Object.freeze({
    id,
    ctx: agentCtx,
    ...(identity ? { identity } : {}),
    dispose,
    [Symbol.asyncDispose]: dispose,
  })
  scope = new Scope(parent, agent, core.dispatchTarget)
  Object.defineProperty(agentCtx, scopeSymbol, { value: scope, enumerable: false })
  return agent
}

/** A frozen copy of an agent's identity, checked field by field. */
function checkIdentity(value: unknown): AgentIdentity {
  const at = 'createAgent(ctx, options).identity'
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(at, 'expected an object { subject, groups?, scopes?, claims? }')
  const { subject, groups, scopes, claims } = value as Record<string, unknown>
  if (typeof subject !== 'string' || subject === '')
    throw new ConfigError(`${at}.subject`, 'expected a non-empty string')
  const list = (field: unknown, key: string): readonly string[] | undefined => {
    if (field === undefined) return undefined
    if (!Array.isArray(field) || !field.every((item) => typeof item === 'string'))
      throw new ConfigError(`${at}.${key}`, 'expected an array of strings')
    return Object.freeze([...field])
  }
  if (claims !== undefined && (typeof claims !== 'object' || claims === null || Array.isArray(claims)))
    throw new ConfigError(`${at}.claims`, 'expected an object of claims')
  const checkedGroups = list(groups, 'groups')
  const checkedScopes = list(scopes, 'scopes')
  return Object.freeze({
    subject,
    ...(checkedGroups ? { groups: checkedGroups } : {}),
    ...(checkedScopes ? { scopes: checkedScopes } : {}),
    ...(claims ? { claims: Object.freeze({ ...(claims as Record<string, unknown>) }) } : {}),
  })
}
