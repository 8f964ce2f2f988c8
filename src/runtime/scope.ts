import { Context, symbols } from 'cordis'
import type { Agent, ToolGuard, ToolPresentationMode } from '../contract/execution.js'
import type { ToolDefinition, ToolSchema } from '../contract/tool-definition.js'
import type { ToolTransport } from './transport.js'

/** Symbol under which an agent's context carries its scope. */
export const scopeSymbol: unique symbol = Symbol('toolgate.scope')

/** A compiled `restrict()` filter. */
export interface CompiledRestriction {
  readonly allow: ReadonlySet<string> | undefined
  readonly deny: ReadonlySet<string> | undefined
}

/** A `tools.host.hide(test)` test: whether `name` is hidden from the view of `agent` (undefined: the global layer). */
export type ToolHider = (name: string, agent: Agent | undefined) => boolean

/** A compiled `tools.defer(patterns)` rule: whether a tool name is deferred by it. */
export interface DeferRule {
  test(name: string): boolean
}

/** What one scope sees, recomputed lazily after any registry change. */
export interface ResolvedView {
  readonly version: number
  readonly byName: ReadonlyMap<string, ToolDefinition>
  /** Model-facing projection, serialized once; `schemas()` parses a fresh deep copy. */
  readonly schemasJson: string
  readonly mode: ToolPresentationMode
  /** Guards of every scope on the chain, global first. */
  readonly guards: readonly ToolGuard[]
  /**
   * Visible tools left out of `schemasJson` (and the Code Mode SDK) until they are loaded: callable,
   * but only found through the finder (a tool search) or by name.
   */
  readonly deferred: ReadonlySet<string>
}

/**
 * One layer of the registry: the deployment-global layer (no parent) or an agent scope.
 * Visibility is `own ∪ restrict(parent view)`, so a child inherits what its parent sees.
 */
export class Scope {
  readonly own = new Map<string, ToolDefinition>()
  readonly restrictions = new Set<CompiledRestriction>()
  readonly guards = new Set<ToolGuard>()
  /** `tools.host.hide(test)` tests of this layer: they hide in every view below it too. */
  readonly hiders = new Set<ToolHider>()
  presentation: ToolPresentationMode | undefined
  /** `tools.defer(patterns)` rules of this layer; they apply to every scope below it too. */
  readonly deferRules = new Set<DeferRule>()
  /** Deferred tools loaded for this scope (and the scopes below it), for the scope's lifetime. */
  readonly loaded = new Set<string>()
  view: ResolvedView | undefined
  /** Set when the agent owning this scope is disposed. */
  disposed = false
  /** Scope-filtered dispatch `this`: Cordis consults `[Context.filter]` per listener. */
  readonly dispatchThis: object
  readonly chain: ReadonlySet<Scope>

  constructor(
    readonly parent: Scope | undefined,
    readonly agent: Agent | undefined,
    runtime: object,
  ) {
    const chain = new Set<Scope>(parent ? parent.chain : [])
    chain.add(this)
    this.chain = chain
    // Listeners registered through an agent context carry that agent's scope; they hear a call
    // when their scope is on the call's chain. Plain listeners (no scope) hear every call.
    this.dispatchThis = Object.create(runtime, {
      [Context.filter]: {
        value: (hookCtx: Context) => {
          const hookScope = (hookCtx as unknown as Record<symbol, unknown>)[scopeSymbol]
          return hookScope === undefined || chain.has(hookScope as Scope)
        },
      },
      // Cordis re-traces a listener's `this` on every call when it carries a service tracker
      // (a fresh Proxy per listener per call); the dispatch `this` opts out of that.
      [symbols.tracker]: { value: undefined },
    })
  }

  /** Every layer this scope inherits from, nearest first. */
  *ancestors(): Iterable<Scope> {
    for (let scope = this.parent; scope; scope = scope.parent) yield scope
  }

  /** Whether `name` is registered in some layer this scope inherits. */
  inherits(name: string): boolean {
    for (const scope of this.ancestors()) if (scope.own.has(name)) return true
    return false
  }

  resolve(
    version: number,
    defaultMode: ToolPresentationMode,
    installed: ToolTransport | undefined,
    finder?: ToolDefinition,
  ): ResolvedView {
    const cached = this.view
    if (cached && cached.version === version) return cached
    const byName = new Map<string, ToolDefinition>()
    if (this.parent) {
      const inherited = this.parent.resolve(version, defaultMode, installed, finder).byName
      // The parent's transport and finder entries follow the parent's own view; this scope decides its own below.
      const skip = installed?.definition.name
      for (const [name, definition] of inherited) {
        if (name !== skip && definition !== finder && this.admits(name)) byName.set(name, definition)
      }
    }
    for (const [name, definition] of this.own) byName.set(name, definition)
    // Hidden by a test on the chain, asked for this view's agent; the transport and finder join below.
    for (const scope of this.chain)
      for (const hider of scope.hiders)
        for (const name of byName.keys()) if (hider(name, this.agent)) byName.delete(name)
    let mode: ToolPresentationMode = defaultMode
    for (const scope of this.chain) if (scope.presentation) mode = scope.presentation
    const transport = mode === 'native' ? undefined : installed
    const deferred = new Set<string>()
    for (const definition of byName.values()) if (this.defers(definition)) deferred.add(definition.name)
    // The finder joins a view only while something in it is deferred: it is how those are found.
    if (finder !== undefined && deferred.size > 0 && !byName.has(finder.name)) byName.set(finder.name, finder)
    const schemas: ToolSchema[] = []
    for (const definition of byName.values()) {
      if (mode === 'code' || definition.name === transport?.definition.name || deferred.has(definition.name)) continue
      schemas.push({ name: definition.name, description: definition.description, parameters: definition.parameters })
    }
    if (transport) {
      // The model learns the SDK from the transport's own description, rendered for this scope.
      const { definition } = transport
      const description = transport.describe(byName, deferred)
      schemas.push({ name: definition.name, description, parameters: definition.parameters })
      byName.set(definition.name, definition)
    }
    const guards: ToolGuard[] = []
    for (const scope of this.chain) for (const guard of scope.guards) guards.push(guard)
    const view: ResolvedView = { version, byName, schemasJson: JSON.stringify(schemas), mode, guards, deferred }
    this.view = view
    return view
  }

  /** Deferred here: by its own flag or a rule on the chain, and not loaded on the chain. */
  private defers(definition: ToolDefinition): boolean {
    const { name } = definition
    if (definition.defer === false) return false
    let deferred = definition.defer === true
    for (const scope of this.chain) {
      if (scope.loaded.has(name)) return false
      if (!deferred) for (const rule of scope.deferRules) if (rule.test(name)) deferred = true
    }
    return deferred
  }

  private admits(name: string): boolean {
    for (const restriction of this.restrictions) {
      if (restriction.allow && !restriction.allow.has(name)) return false
      if (restriction.deny?.has(name)) return false
    }
    return true
  }
}
