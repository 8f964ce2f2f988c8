import { type Context, type EventsService, type Logger, symbols } from 'cordis'
import type {
  Agent,
  ApprovalService,
  StandingApprovalStore,
  ToolExecuteOptions,
  ToolExecution,
  ToolExecutionToken,
  ToolPresentationMode,
} from '../contract/execution.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { ToolNotFoundError } from './errors.js'
import { Lifetime } from './lifecycle.js'
import { type ResolvedView, Scope, scopeSymbol } from './scope.js'
import { nearestNames } from './suggest.js'
import type { ToolTransport } from './transport.js'
import { warnContained } from './untrusted.js'

/** One call in flight: its current execution (an approver may edit it) and its host approval channel. */
export interface LiveCall {
  exec: ToolExecution
  readonly approval: ApprovalService | undefined
  /** What the host passed for this call (a suspension callback, a paused program's resumption). */
  readonly host?: ToolExecuteOptions
}

/**
 * The registry's state, separate from the Cordis service object: service methods run on a
 * per-caller view of the service (so `this.ctx` is the caller), while this core is shared.
 */
export class RegistryCore {
  readonly global: Scope
  /** Bumped on every change; views compare it to know they are stale. */
  version = 0
  /**
   * Executions in flight, so nested calls can inherit `rootCallId`, their parent's id and its
   * approval channel from their `parent` token.
   */
  readonly live = new Map<ToolExecutionToken, LiveCall>()
  /** The installed transport (Code Mode's `run_code` under the preset), if any. */
  transport: ToolTransport | undefined
  /** The installed finder (a tool search under the preset): listed wherever something is deferred. */
  finder: ToolDefinition | undefined
  /** Where standing approval rules are kept instead of in memory, when installed. */
  standingStore: StandingApprovalStore | undefined
  /** Disposal state and the running bodies disposal aborts. */
  readonly lifetime = new Lifetime()
  /**
   * The raw events service and its hook table, captured once: every `ctx.*` access goes through
   * Cordis's tracing proxies, which would cost more than the whole pipeline on the per-call path.
   */
  readonly events: EventsService
  readonly hooks: EventsService['_hooks']
  readonly logger: Logger

  constructor(
    readonly ctx: Context,
    readonly defaultMode: ToolPresentationMode,
    dispatchTarget: object,
  ) {
    this.global = new Scope(undefined, undefined, dispatchTarget)
    this.dispatchTarget = dispatchTarget
    const traced = ctx.events as EventsService & Record<symbol, unknown>
    this.events = (traced[symbols.original] as EventsService | undefined) ?? traced
    this.hooks = this.events._hooks
    this.logger = ctx.logger('tools')
  }

  hasHooks(name: string): boolean {
    const hooks = this.hooks[name]
    return hooks !== undefined && hooks.length > 0
  }

  readonly dispatchTarget: object

  /** Whether `name` is the installed transport's (reserved: never registered, restricted or hidden). */
  isTransport(name: string): boolean {
    return this.transport !== undefined && this.transport.definition.name === name
  }

  /**
   * Install the transport; refused while another is installed or a registered tool already holds
   * its name. Returns the uninstaller (idempotent).
   */
  installTransport(transport: ToolTransport): () => void {
    const name = transport?.definition?.name
    if (typeof name !== 'string' || name.length === 0)
      throw new ConfigError('installTransport(transport).definition.name', 'expected a non-empty string')
    if (this.transport !== undefined)
      throw new ConfigError(
        'installTransport(transport)',
        `a transport ("${this.transport.definition.name}") is already installed`,
      )
    if (this.global.own.has(name))
      throw new ConfigError(
        'installTransport(transport)',
        `a registered tool already holds the transport name "${name}"`,
      )
    this.transport = transport
    this.changed()
    return () => {
      if (this.transport !== transport) return
      this.transport = undefined
      this.changed()
    }
  }

  /** Whether `name` is the installed finder's (reserved like the transport's). */
  isFinder(name: string): boolean {
    return this.finder !== undefined && this.finder.name === name
  }

  /**
   * Install the finder tool: it joins every view that has deferred tools. One at a time, and its
   * name must be free; returns the uninstaller (idempotent).
   */
  installFinder(finder: ToolDefinition): () => void {
    if (this.finder !== undefined)
      throw new ConfigError('installFinder(definition)', `a finder ("${this.finder.name}") is already installed`)
    if (this.global.own.has(finder.name) || this.isTransport(finder.name))
      throw new ConfigError('installFinder(definition)', `the name "${finder.name}" is already taken`)
    this.finder = finder
    this.changed()
    return () => {
      if (this.finder !== finder) return
      this.finder = undefined
      this.changed()
    }
  }

  /**
   * Keep standing approval rules in `store` (shared, durable) instead of in memory. One at a time;
   * returns the uninstaller (idempotent).
   */
  installStandingStore(store: StandingApprovalStore): () => void {
    if (this.standingStore !== undefined)
      throw new ConfigError('installStandingStore(store)', 'a standing approval store is already installed')
    this.standingStore = store
    return () => {
      if (this.standingStore === store) this.standingStore = undefined
    }
  }

  /** Tell `tools/registered` / `tools/unregistered` listeners (an index kept beside the registry). */
  announce(event: 'tools/registered' | 'tools/unregistered', definition: ToolDefinition, scope: Scope): void {
    if (!this.hasHooks(event)) return
    try {
      this.events.emit(event, definition, scope.agent)
    } catch (error) {
      warnContained(this, `a ${event} listener failed`, error)
    }
  }

  /** The scope a context carries: an agent's, or the global layer for a plain context. */
  scopeOfContext(ctx: Context): Scope {
    const scope = (ctx as unknown as Record<symbol, unknown>)[scopeSymbol]
    return scope instanceof Scope ? scope : this.global
  }

  /** The scope of an agent (or the global layer); `undefined` for a foreign object. */
  scopeOfAgent(agent: Agent | undefined): Scope | undefined {
    if (agent === undefined) return this.global
    if (typeof agent !== 'object' || agent === null) return undefined
    // A foreign object may throw from any read: it is simply not an agent.
    try {
      const ctx = (agent as { ctx?: unknown }).ctx
      if (typeof ctx !== 'object' || ctx === null) return undefined
      const scope = (ctx as Record<symbol, unknown>)[scopeSymbol]
      return scope instanceof Scope ? scope : undefined
    } catch {
      return undefined
    }
  }

  view(scope: Scope): ResolvedView {
    return scope.resolve(this.version, this.defaultMode, this.transport, this.finder)
  }

  /** Record a change and tell listeners; a throwing `tools/change` listener never reaches the caller. */
  changed(): void {
    this.version++
    if (!this.hasHooks('tools/change')) return
    this.events.parallel('tools/change').catch((error: unknown) => {
      warnContained(this, 'a tools/change listener failed', error)
    })
  }

  /**
   * The not-found error for `name` as `scope` sees it: the way back under Code Mode, or the nearest
   * names in the scope's own view (so a hidden tool is never named).
   */
  notFound(name: string, view: ResolvedView, direct: boolean): ToolNotFoundError {
    const transport = this.transport
    if (direct && view.mode === 'code' && transport !== undefined && !this.isTransport(name) && view.byName.has(name))
      return new ToolNotFoundError(name, transport.redirect(name))
    return new ToolNotFoundError(
      name,
      'no tool of that name is visible to this agent',
      nearestNames(name, view.byName.keys()),
    )
  }
}
