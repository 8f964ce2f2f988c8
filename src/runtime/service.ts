import { type Context, Service } from 'cordis'
import type {
  ScopeKey,
  StandingApprovalRule,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolGuard,
  ToolPresentationMode,
  ToolRestriction,
} from '../contract/execution.js'
import type { ToolDefinition, ToolSchema } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { revokeStandingRule, standingRulesOf } from './approval-flow.js'
import { checkDefinition, ToolRegistrationError } from './definition-check.js'
import { createToolHost, type ToolHost } from './host.js'
import { runPipeline } from './pipeline.js'
import { RegistryCore } from './registry.js'
import type { CompiledRestriction, DeferRule, Scope } from './scope.js'
import './events.js'

/** Configuration of the runtime core. */
export interface ToolRuntimeCoreConfig {
  /** Deployment-default presentation; `presentAs` in a scope overrides it. */
  mode?: ToolPresentationMode
}

const modes: readonly ToolPresentationMode[] = ['native', 'code', 'both']
const parallel: ToolExecutionMode = Object.freeze({ kind: 'parallel' })
const exclusive: ToolExecutionMode = Object.freeze({ kind: 'exclusive' })

/** The shared core behind a service, for the runtime's own modules (`createAgent`); never exported past runtime/. */
export const coreOf: unique symbol = Symbol('toolgate.core')

/**
 * The tool registry and execution pipeline without any transport, a Cordis 4 service registered
 * as `tools`. `ToolRuntime` (the preset) also installs Code Mode into its transport slot; features
 * plug in through `tools.host` and `tools.execute(input, options)`.
 * `register`, `restrict`, `guard` and `presentAs` act on the caller's scope (the context through
 * which `ctx.tools` was reached); `get`, `schemas`, `standingApprovals` and `revokeStandingApproval`
 * take the scope as an argument (omitted: the global layer); `execute` and `executionMode` run as
 * `input.agent`.
 */
export class ToolRuntimeCore extends Service<ToolRuntimeCoreConfig> {
  readonly config: { readonly mode: ToolPresentationMode }
  readonly [coreOf]: RegistryCore
  /** The host API features plug in through (transport slot, visible tools, feature events, lifetime). */
  readonly host: ToolHost

  constructor(ctx: Context, config?: ToolRuntimeCoreConfig) {
    super(ctx, 'tools')
    // Methods still see their caller as `this.ctx` through the service's tracing proxy. Skipping
    // Cordis's per-access method shadow and its `tools.*` accessor lookup (toolgate defines no
    // such accessors) saves several µs on every `ctx.tools.execute(...)`.
    const tracker = (this as unknown as Record<symbol, { noShadow?: boolean; associate?: string } | undefined>)[
      Service.tracker
    ]
    if (tracker) {
      tracker.noShadow = true
      tracker.associate = undefined
    }
    const mode = config?.mode ?? 'native'
    if (!modes.includes(mode))
      throw new ConfigError('tools config.mode', `expected "native", "code" or "both", got ${String(mode)}`)
    // Subclass presets keep their own fields next to `mode`.
    this.config = { ...config, mode }
    const core = new RegistryCore(ctx, mode, this)
    this[coreOf] = core
    this.host = createToolHost(core)
    // Unloading the service (directly or with its app) disposes the runtime: held references to it
    // refuse further work with RUNTIME_DISPOSED, and running bodies are aborted.
    ctx.effect(() => () => core.lifetime.dispose(), 'tools lifetime')
  }

  /** The scope of the context this method was reached through; throws once it or the runtime is disposed. */
  private callerScope(method: string): Scope {
    const core = this[coreOf]
    return live(core, core.scopeOfContext(this.ctx), method)
  }

  /** Binds an effect to the calling plugin's lifetime and returns an idempotent, synchronous disposer. */
  private own(label: string, add: () => void, remove: () => void): () => void {
    let active = true
    const release = () => {
      if (!active) return
      active = false
      remove()
    }
    add()
    let disposeEffect: (() => unknown) | undefined
    try {
      // Through the fiber itself: `ctx.effect` is a mixin that the context's Proxy resolves on a miss
      // path building an Error per read, half of a registration's cost at thousands of tools.
      disposeEffect = this.ctx.fiber.effect(() => release, label)
    } catch (error) {
      release()
      throw error
    }
    return () => {
      if (!active) return
      release()
      disposeEffect?.()
    }
  }

  presentAs(mode: ToolPresentationMode): () => void {
    const scope = this.callerScope('presentAs')
    if (scope.agent === undefined) {
      throw new ConfigError(
        'tools.presentAs()',
        'only an agent context may declare a presentation; use the `mode` config field for the deployment default',
      )
    }
    if (!modes.includes(mode))
      throw new ConfigError('tools.presentAs(mode)', `expected "native", "code" or "both", got ${String(mode)}`)
    if (scope.presentation !== undefined) {
      throw new ConfigError(
        'tools.presentAs()',
        `agent "${scope.agent.id}" already declared presentation "${scope.presentation}"`,
      )
    }
    const core = this[coreOf]
    return this.own(
      `tools.presentAs(${mode})`,
      () => {
        scope.presentation = mode
        core.changed()
      },
      () => {
        scope.presentation = undefined
        core.changed()
      },
    )
  }

  register(definition: ToolDefinition): () => void {
    const scope = this.callerScope('register')
    const checked = checkDefinition(definition)
    const core = this[coreOf]
    if (core.isTransport(checked.name) || core.isFinder(checked.name)) {
      throw new ToolRegistrationError(`tool "${checked.name}"`, [
        `definition.name: "${checked.name}" is reserved for the installed ${core.isFinder(checked.name) ? 'finder' : 'transport'}`,
      ])
    }
    if (scope.own.has(checked.name)) {
      const layer = scope.agent ? `agent "${scope.agent.id}"` : 'the global layer'
      throw new ToolRegistrationError(`tool "${checked.name}"`, [
        `definition.name: "${checked.name}" is already registered in ${layer}`,
      ])
    }
    return this.own(
      `tools.register(${checked.name})`,
      () => {
        scope.own.set(checked.name, checked)
        core.announce('tools/registered', checked, scope)
        core.changed()
      },
      () => {
        if (scope.own.get(checked.name) !== checked) return
        scope.own.delete(checked.name)
        core.announce('tools/unregistered', checked, scope)
        core.changed()
      },
    )
  }

  restrict(filter: ToolRestriction): () => void {
    const scope = this.callerScope('restrict')
    if (scope.agent === undefined)
      throw new ConfigError('tools.restrict()', 'restrictions apply to an agent scope; call it through agent.ctx')
    const core = this[coreOf]
    const compiled = compileRestriction(core, scope, filter)
    return this.own(
      'tools.restrict()',
      () => {
        scope.restrictions.add(compiled)
        core.changed()
      },
      () => {
        if (scope.restrictions.delete(compiled)) core.changed()
      },
    )
  }

  /**
   * Defer the tools whose names match `patterns` (`*` matches any run of characters) in a scope (an
   * agent, or omitted: the global layer) and the scopes below it: they stay callable but leave
   * `schemas()` and the Code Mode SDK until loaded. A definition's own `defer` flag wins over a
   * rule. The rule belongs to the calling plugin; returns its idempotent remover.
   */
  defer(patterns: readonly string[], scope?: ScopeKey): () => void {
    const core = this[coreOf]
    const target = resolveScopeKey(core, scope, 'defer')
    const rule = compileDeferRule(patterns)
    return this.own(
      'tools.defer()',
      () => {
        target.deferRules.add(rule)
        core.changed()
      },
      () => {
        if (target.deferRules.delete(rule)) core.changed()
      },
    )
  }

  /**
   * Load deferred tools for a scope (an agent, or omitted: the global layer) for the rest of its
   * lifetime: they join its `schemas()` and SDK (and those of the scopes below it). Names the scope
   * does not see, or that are not deferred there, are ignored. Returns the names newly loaded.
   */
  load(names: readonly string[], scope?: ScopeKey): string[] {
    if (!Array.isArray(names)) throw new ConfigError('tools.load(names)', 'expected an array of tool names')
    const core = this[coreOf]
    const target = resolveScopeKey(core, scope, 'load')
    const deferred = core.view(target).deferred
    const added: string[] = []
    names.forEach((name: unknown, i) => {
      if (typeof name !== 'string') throw new ConfigError(`tools.load(names)[${i}]`, 'expected a tool name string')
    })
    for (const name of names) {
      if (!deferred.has(name) || target.loaded.has(name)) continue
      target.loaded.add(name)
      added.push(name)
    }
    if (added.length > 0) core.changed()
    return added
  }

  /** The visible tools of a scope that are deferred and not loaded yet, by name. */
  deferred(scope?: ScopeKey): string[] {
    const core = this[coreOf]
    return [...core.view(resolveScopeKey(core, scope, 'deferred')).deferred]
  }

  guard(guard: ToolGuard): () => void {
    if (typeof guard !== 'function') throw new ConfigError('tools.guard(guard)', 'expected a synchronous function')
    const scope = this.callerScope('guard')
    const core = this[coreOf]
    // Guards are part of the resolved view, so adding one invalidates it; they do not change visibility.
    return this.own(
      'tools.guard()',
      () => {
        scope.guards.add(guard)
        core.version++
      },
      () => {
        if (scope.guards.delete(guard)) core.version++
      },
    )
  }

  get(name: string, scope?: ScopeKey): ToolDefinition | undefined {
    const core = this[coreOf]
    return core.view(resolveScopeKey(core, scope, 'get')).byName.get(name)
  }

  schemas(scope?: ScopeKey): ToolSchema[] {
    const core = this[coreOf]
    return JSON.parse(core.view(resolveScopeKey(core, scope, 'schemas')).schemasJson) as ToolSchema[]
  }

  executionMode(input: ToolExecutionInput): ToolExecutionMode {
    return modeOf(this[coreOf], input)
  }

  /**
   * Run one call through the pipeline; the promise always fulfils with exactly one frozen result.
   * `options` carries what the host (never the model) decides for this call: a resumed decision, a
   * per-call approval channel, a suspension callback.
   */
  execute(input: ToolExecutionInput, options?: ToolExecuteOptions): Promise<ToolExecutionResult> {
    return runPipeline(this[coreOf], input, options)
  }

  /**
   * The standing approval rules of a scope (an agent, or omitted: calls without an agent), installed
   * by `allowed-always` / `denied-always` answers, in installation order. They end with the scope.
   * Rules kept in a standing store (`tools.host.installStandingStore`) are read there, not listed here.
   */
  standingApprovals(scope?: ScopeKey): StandingApprovalRule[] {
    return standingRulesOf(resolveScopeKey(this[coreOf], scope, 'standingApprovals', false))
  }

  /** Revoke a scope's standing rule for `toolName`: later asks go to the approval service again. */
  revokeStandingApproval(toolName: string, scope?: ScopeKey): boolean {
    if (typeof toolName !== 'string')
      throw new ConfigError('tools.revokeStandingApproval(toolName)', 'expected a tool name')
    return revokeStandingRule(resolveScopeKey(this[coreOf], scope, 'revokeStandingApproval', false), toolName)
  }
}

/** Fail-closed scheduling classification. */
function modeOf(core: RegistryCore, input: ToolExecutionInput): ToolExecutionMode {
  // Anything thrown while reading a hostile input, or by the classifier, is exclusive.
  try {
    const name: unknown = input?.name
    const scope = core.scopeOfAgent(input?.agent)
    if (!scope || typeof name !== 'string') return exclusive
    const view = core.view(scope)
    const definition = view.byName.get(name)
    if (!definition?.isConcurrencySafe) return exclusive
    if (view.mode === 'code' && input.parent === undefined && !core.isTransport(name)) return exclusive
    return definition.isConcurrencySafe(input.arguments) === true ? parallel : exclusive
  } catch {
    return exclusive
  }
}

function compileDeferRule(patterns: readonly string[]): DeferRule {
  if (!Array.isArray(patterns) || patterns.length === 0)
    throw new ConfigError('tools.defer(patterns)', 'expected a non-empty array of name patterns')
  const exact = new Set<string>()
  const globs: RegExp[] = []
  patterns.forEach((pattern: unknown, i) => {
    if (typeof pattern !== 'string' || pattern.length === 0)
      throw new ConfigError(`tools.defer(patterns)[${i}]`, 'expected a non-empty name pattern string')
    if (!pattern.includes('*')) exact.add(pattern)
    else globs.push(new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`, 's'))
  })
  return Object.freeze({ test: (name: string) => exact.has(name) || globs.some((glob) => glob.test(name)) })
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')
}

function compileRestriction(core: RegistryCore, scope: Scope, filter: ToolRestriction): CompiledRestriction {
  const issues: string[] = []
  if (typeof filter !== 'object' || filter === null)
    throw new ConfigError('tools.restrict(filter)', 'expected { allow?, deny? }')
  const read = (key: 'allow' | 'deny'): Set<string> | undefined => {
    const list = filter[key]
    if (list === undefined) return undefined
    if (!Array.isArray(list)) {
      issues.push(`filter.${key}: expected an array of tool names`)
      return undefined
    }
    if (list.length === 0) issues.push(`filter.${key}: an empty list restricts nothing; omit it`)
    const names = new Set<string>()
    list.forEach((name: unknown, i) => {
      const path = `filter.${key}[${i}]`
      if (typeof name !== 'string') issues.push(`${path}: expected a tool name string`)
      else if (core.isTransport(name))
        issues.push(`${path}: "${name}" is the reserved transport and cannot be restricted`)
      else if (core.isFinder(name)) issues.push(`${path}: "${name}" is the reserved finder and cannot be restricted`)
      else if (scope.own.has(name))
        issues.push(
          `${path}: "${name}" is registered in this agent's own scope; restrictions filter only inherited tools`,
        )
      else if (!scope.inherits(name)) issues.push(`${path}: "${name}" is not a registered tool this agent inherits`)
      else names.add(name)
    })
    return names
  }
  const allow = read('allow')
  const deny = read('deny')
  if (filter.allow === undefined && filter.deny === undefined) issues.push('filter: give allow and/or deny')
  if (issues.length) throw new ConfigError('tools.restrict(filter)', issues)
  return Object.freeze({ allow, deny })
}

// Functions, not methods: the service is reached through Cordis's traced Proxy, where each
// `this.method` read makes a shadow Proxy (a cost on every `tools.get`, the timeouts' lookup per call).

/** `live: false` for read-only questions that stay answerable after disposal (standing rules: none). */
function resolveScopeKey(core: RegistryCore, scope: ScopeKey | undefined, method: string, isLive = true): Scope {
  const resolved = core.scopeOfAgent(scope)
  if (!resolved) throw new ConfigError(`tools.${method}(scope)`, 'expected an Agent created by createAgent()')
  return isLive ? live(core, resolved, method) : resolved
}

function live(core: RegistryCore, scope: Scope, method: string): Scope {
  const halted = core.lifetime.halted(scope, `tools.${method}()`)
  if (halted) throw halted
  return scope
}
