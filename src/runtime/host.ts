import type {
  ApprovalRequest,
  ProgramResumption,
  ProgramSuspension,
  ScopeKey,
  StandingApprovalStore,
  ToolExecutionToken,
} from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { checkDefinition } from './definition-check.js'
import type { RegistryCore } from './registry.js'
import type { Scope, ToolHider } from './scope.js'
import type { ToolTransport } from './transport.js'
import { warnContained } from './untrusted.js'
import { waterfall } from './waterfall.js'

/** What {@link ToolHost.pausing} tells a running call whose host keeps suspended calls. */
export interface CallPausing {
  readonly program?: ProgramResumption
  suspend(request: ApprovalRequest, program: ProgramSuspension): void
  /** The host's `onProgramLog`, when it gave one: resolves once the host has the log (never rejects). */
  readonly record?: (log: JsonValue) => Promise<void>
}

/**
 * What a feature uses to plug into the runtime (`tools.host`): the same surface Code Mode, the
 * journal, the model loop and the MCP server use, so a plugin author needs nothing else. Calls go
 * through `tools.execute(input, options)`; nested dispatch passes the enclosing call's token as
 * `input.parent`.
 */
export interface ToolHost {
  /**
   * Install the transport tool (Code Mode's `run_code` is the one the preset installs): it joins every
   * `code`/`both` view and its name is reserved. One at a time; returns the idempotent uninstaller.
   */
  installTransport(transport: ToolTransport): () => void
  /**
   * The tools a scope sees, by name (an agent, or omitted: the global layer). The map is read-only
   * and keeps its identity until the view changes, so it can key a cache.
   */
  visibleTools(scope?: ScopeKey): ReadonlyMap<string, ToolDefinition>
  /**
   * Install the finder tool (a tool search): it joins every view that has deferred tools, and its
   * name is reserved. One at a time; returns the idempotent uninstaller.
   */
  installFinder(definition: ToolDefinition): () => void
  /**
   * Keep standing approval rules (`allowed-always` / `denied-always` answers) in `store` instead of
   * the scope's memory: an ask looks its rule up there, and an `-always` answer is kept there before
   * the call goes on. One at a time; returns the idempotent uninstaller. Rules already in memory
   * keep answering; `tools.standingApprovals()` lists only those.
   */
  installStandingStore(store: StandingApprovalStore): () => void
  /**
   * Hide from the views of a scope (an agent, or omitted: the global layer) and every scope below it
   * the tools for which `test(name, agent)` is true, `agent` being the one whose view is built
   * (undefined for the global layer): a hidden tool is neither listed nor found by name. The transport
   * and the finder are never hidden. Call `refresh` of the returned handle when the test's answers
   * change; `remove` is idempotent.
   */
  hide(test: ToolHider, scope?: ScopeKey): { refresh(): void; remove(): void }
  /** The installed finder's name, if any (Code Mode routes `tools.$search` to it). */
  finderName(): string | undefined
  /** The visible tools of a scope that are deferred and not loaded yet (read-only, stable while the view lives). */
  deferredTools(scope?: ScopeKey): ReadonlySet<string>
  /** Whether any listener is registered for `event` (check before building an expensive payload). */
  hasListeners(event: string): boolean
  /**
   * Whether the running call of `token` may pause (its host, a model loop, keeps suspended calls):
   * the resumption its host handed it, and `suspend`, which reports its suspension to the host.
   * Undefined when the host cannot keep a suspension.
   */
  pausing(token: ToolExecutionToken): CallPausing | undefined
  /**
   * A feature's own waterfall event, filtered like the runtime's: listeners registered through the
   * agent's context (or its ancestors) and global ones run in registration order, each getting `next`.
   * A throwing listener rejects the returned promise; the caller decides how to contain it.
   */
  waterfall<R>(
    event: string,
    agent: ScopeKey | undefined,
    args: readonly unknown[],
    inner: () => Promise<R>,
  ): Promise<R>
  /**
   * A feature's own observer event, scope-filtered like `waterfall`, with every listener awaited in
   * parallel. A failing listener is logged and never reaches the caller: the promise always fulfils.
   */
  emit(event: string, agent: ScopeKey | undefined, args: readonly unknown[]): Promise<void>
  /** Log a contained failure (a listener, a callback) through the runtime's logger. */
  warn(what: string, error: unknown): void
  /** Refuse further work (`RUNTIME_DISPOSED`) and abort every running body through its signal. */
  halt(): void
  /** Settles once every call in flight has produced its one result (at once when none runs). */
  settled(): Promise<void>
}

export function createToolHost(core: RegistryCore): ToolHost {
  const scopeOf = (agent: ScopeKey | undefined, method: string): Scope => {
    const scope = core.scopeOfAgent(agent)
    if (!scope) throw new ConfigError(`tools.host.${method}(scope)`, 'expected an Agent created by createAgent()')
    return scope
  }
  return Object.freeze({
    installTransport: (transport: ToolTransport) => core.installTransport(transport),
    visibleTools(scope?: ScopeKey) {
      const resolved = scopeOf(scope, 'visibleTools')
      const halted = core.lifetime.halted(resolved, 'tools.host.visibleTools()')
      if (halted) throw halted
      return core.view(resolved).byName
    },
    installFinder: (definition: ToolDefinition) => core.installFinder(checkDefinition(definition)),
    hide(test: ToolHider, scope?: ScopeKey) {
      if (typeof test !== 'function') throw new ConfigError('tools.host.hide(test)', 'expected a function')
      const resolved = scopeOf(scope, 'hide')
      const hider: ToolHider = (name, agent) => test(name, agent)
      resolved.hiders.add(hider)
      core.changed()
      return Object.freeze({
        refresh: () => core.changed(),
        remove() {
          if (resolved.hiders.delete(hider)) core.changed()
        },
      })
    },
    finderName: () => core.finder?.name,
    installStandingStore(store: StandingApprovalStore) {
      if (
        store === null ||
        typeof store !== 'object' ||
        typeof store.find !== 'function' ||
        typeof store.keep !== 'function'
      )
        throw new ConfigError('tools.host.installStandingStore(store)', 'expected { find, keep }')
      return core.installStandingStore(store)
    },
    deferredTools(scope?: ScopeKey) {
      const resolved = scopeOf(scope, 'deferredTools')
      const halted = core.lifetime.halted(resolved, 'tools.host.deferredTools()')
      if (halted) throw halted
      return core.view(resolved).deferred
    },
    hasListeners: (event: string) => core.hasHooks(event),
    pausing(token: ToolExecutionToken) {
      const host = core.live.get(token)?.host
      const onSuspended = host?.onSuspended
      if (onSuspended === undefined) return undefined
      const onProgramLog = host?.onProgramLog
      return {
        ...(host?.program === undefined ? {} : { program: host.program }),
        ...(onProgramLog === undefined
          ? {}
          : {
              record: async (log: JsonValue) => {
                try {
                  await onProgramLog(log)
                } catch (error) {
                  warnContained(core, 'an onProgramLog callback failed', error)
                }
              },
            }),
        suspend: (request: ApprovalRequest, program: ProgramSuspension) => {
          try {
            onSuspended(request, program)
          } catch (error) {
            warnContained(core, 'an onSuspended callback failed', error)
          }
        },
      }
    },
    waterfall<R>(event: string, agent: ScopeKey | undefined, args: readonly unknown[], inner: () => Promise<R>) {
      return waterfall(core.hooks, scopeOf(agent, 'waterfall').dispatchThis, event, args, inner)
    },
    async emit(event: string, agent: ScopeKey | undefined, args: readonly unknown[]) {
      if (!core.hasHooks(event)) return
      try {
        const thisArg = (core.scopeOfAgent(agent) ?? core.global).dispatchThis
        await core.events.parallel(thisArg as never, event as never, ...(args as never[]))
      } catch (error) {
        warnContained(core, `a ${event} listener failed`, error)
      }
    },
    warn: (what: string, error: unknown) => warnContained(core, what, error),
    halt: () => core.lifetime.dispose(),
    settled: () => core.lifetime.drain(core.live),
  })
}
