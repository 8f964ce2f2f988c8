// The gateway behind `toolgate serve` and `toolgate tools`: toolgate's own tools rooted in a
// workspace, upstream MCP servers imported under their prefix, and the policy, all seen through
// one serving agent. An upstream that is down is left out and retried; the others keep serving.
import { open, stat } from 'node:fs/promises'
import type { Context } from 'cordis'
import { RUN_CODE_NAME } from '../code-mode/constants.js'
import type { ToolRunContext } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { JournalConfig } from '../journal/journal.js'
import {
  type ClientCapabilities,
  type ConnectMcpServerOptions,
  connectMcpServer,
  createMcpRelay,
  handlersForClient,
  identityOf,
  MCP_LOG_LEVELS,
  McpClientDirectory,
  type McpConnection,
  type McpLogLevel,
  type McpLogMessage,
  type McpServerCatalog,
  type McpServerFeatures,
  type McpServerLogging,
  type McpSkippedTool,
  registerInTurn,
} from '../mcp/gateway.js'
import type { PolicyEnforcement } from '../policy/index.js'
import { createToolRuntime, type ToolRuntime } from '../preset/index.js'
import { type AgentHandle, createAgent } from '../runtime/index.js'
import { takeCallCredential, usesSharedCredential, withCallerAuth } from './caller-credentials.js'
import { serverPrefix } from './config.js'
import { createGatewayCatalog } from './gateway-catalog.js'
import { deferralPatterns } from './gateway-defer.js'
import { type GatewayReloadSummary, reloadGateway, ToolCallsInFlight } from './gateway-reload.js'
import { type IdentityScopes, identityScopes } from './identity-scopes.js'
import type { Log } from './log.js'
import { ownToolDefinitions } from './own-tools.js'
import { configDecider, enforcePolicy, swappableDecider } from './policy.js'
import { enforceGatewayPolicy, journalDecision } from './policy-document.js'
import type { IdentityPolicy } from './policy-rules.js'
import type { GatewaySettings } from './settings.js'
import { upstreamOf } from './upstream-of.js'
import { readVaultKey } from './vault.js'
import { fileVaultStorage, storeVaultStorage, type VaultStorage } from './vault-storage.js'

export { perSession } from './gateway-defer.js'

export interface Gateway {
  readonly ctx: Context
  readonly tools: ToolRuntime
  /** The scope served to clients. */
  readonly agent: AgentHandle
  /** Each authenticated identity's own scope under `agent`, with what `policy.rules` decide for it. */
  readonly identities: IdentityScopes
  /** The policy document's decisions (conditions, quotas) over every call, and `explain`. */
  readonly policy: PolicyEnforcement
  /** Whether some tools are deferred behind `search_tools` (each session then gets its own scope). */
  readonly deferring: boolean
  readonly connections: ReadonlyMap<string, McpConnection>
  /** Each upstream's state, in config order. */
  upstreams(): UpstreamReport[]
  /**
   * Tools that two servers (or a server and the gateway itself) both name, found while starting:
   * `serve` and `tools` refuse to start with them; `serve --check` reports them.
   */
  readonly collisions: readonly string[]
  /**
   * The upstreams' log messages, each with the logger set to the server's config name (followed by
   * "/" and the server's own logger when it named one); a level set here goes to every upstream.
   */
  readonly logging: McpServerLogging
  /**
   * The upstreams' resources, prompts and completions for a new client (each part only when some
   * upstream offers it or has not answered yet), or undefined when none does.
   */
  catalog(): McpServerCatalog | undefined
  /**
   * The client sessions served and the calls they run: what the upstreams ask (sampling,
   * elicitation, roots) is relayed to the client whose call they serve.
   */
  readonly clients: McpClientDirectory
  /**
   * Take a new config (validated, with what only a restart changes kept as it was): new calls see
   * it at once, calls in flight finish under the old one, and only upstreams whose entry changed
   * reconnect. Resolves once every added or changed upstream was tried once.
   */
  reconfigure(next: GatewaySettings): Promise<GatewayReloadSummary>
  /** The journal's `credential` of a call (read once per call): what a store's journal records too. */
  readonly credentialOf: NonNullable<JournalConfig['credentialOf']>
  close(): Promise<void>
}

/** What a caller of {@link openGateway} hears while it starts. */
export interface GatewayStartup {
  /** An upstream's first session initialized, with what it declared (before its lists are read). */
  opened?(name: string, features: McpServerFeatures): void
  /** Every upstream is being tried: the gateway waits for them from now on. */
  idle?(): void
  /** An upstream's first attempt ended, connected or down. */
  settled?(name: string, connection: McpConnection): void
  /**
   * The capabilities of the one client the gateway will serve: each upstream is declared exactly
   * these (of those it relays), and is initialized once they are known. Without it every upstream
   * is declared all it relays, for clients that come and go.
   */
  clientCapabilities?(): Promise<ClientCapabilities>
}

/** What `serve --check` reports about one upstream server. */
export interface UpstreamReport {
  /** Its name in the config. */
  readonly name: string
  readonly status: 'connected' | 'down'
  /** The registered (prefixed) tool names. */
  readonly tools: readonly string[]
  /** Why it is down. */
  readonly error?: string
  /** Its tools that are not served, each with the reason. */
  readonly skipped: readonly string[]
  /** The protocol revision its session negotiated, when connected. */
  readonly protocolVersion?: string
}

/**
 * Build the gateway; fails when the root is unusable. Every upstream is tried once before this
 * resolves; one that is down is logged by its config name and retried in the background.
 */
export async function openGateway(settings: GatewaySettings, log: Log, startup?: GatewayStartup): Promise<Gateway> {
  const files = settings.files ?? true
  // Without the file tools and bash nothing works in the root, so it need not exist.
  if (files || settings.bash) {
    const root = await stat(settings.root).catch(() => undefined)
    if (!root?.isDirectory()) throw new ConfigError('--root', `"${settings.root}" is not a directory`)
  }
  if (settings.journal !== undefined && !settings.check) {
    // An audit journal that cannot be written stops the gateway, rather than serving unrecorded.
    const handle = await open(settings.journal, 'a').catch((error: unknown) => {
      throw new ConfigError('journal', `cannot append to ${settings.journal}: ${(error as Error).message}`)
    })
    await handle.close()
  }
  // createToolRuntime() installs the timeout policy; loading it again would time every call twice.
  const { ctx, tools } = await createToolRuntime({ mode: settings.mode })
  // The gateway's own tools are only those served: a name they do not take is free for an upstream.
  const own = ownToolDefinitions({ files, bash: settings.bash, root: settings.root })
  for (const definition of own) tools.register(definition)
  if (own.length > 0) log.debug(`workspace ${settings.root}: ${own.map((d) => d.name).join(', ')}`)

  // What a reload may replace is read from here at each use.
  let current = settings
  const ownNames = own.map((d) => d.name)
  if (settings.mode !== 'native') ownNames.push(RUN_CODE_NAME)
  const order = Object.keys(settings.servers)
  const connections = new Map<string, McpConnection>()
  const skipped = new Map<string, string[]>(order.map((name) => [name, []]))
  let starting = true
  const startSkips: { server: string; skip: McpSkippedTool }[] = []
  const logListeners = new Set<(message: McpLogMessage) => void>()
  const relayLog = (message: McpLogMessage, server: string) => {
    const logger = message.logger === undefined ? server : `${server}/${message.logger}`
    for (const listener of logListeners) listener({ ...message, logger })
  }

  /** Who already serves `tool`: the gateway itself or another server, or undefined. */
  const ownerOf = (tool: string, except: string): string | undefined => {
    if (ownNames.includes(tool)) return 'the gateway itself'
    for (const [name, connection] of connections)
      if (name !== except && connection.tools.includes(tool)) return `servers.${name}`
    return undefined
  }
  /** Why a tool is not served, naming the other side of a name collision. */
  const skipReason = (server: string, skip: McpSkippedTool, owner: string | undefined) =>
    owner === undefined
      ? `servers.${server}: its tool ${JSON.stringify(skip.tool)} is not served: ${skip.reason}`
      : `servers.${server}: its tool ${JSON.stringify(skip.tool)} is not served: the name ${JSON.stringify(skip.name)} is already served by ${owner} ` +
        '(set a different "prefix" on one of them)'
  const onSkipped = (server: string, skip: McpSkippedTool) => {
    if (starting) return void startSkips.push({ server, skip })
    const text = skipReason(server, skip, ownerOf(skip.name, server))
    skipped.get(server)?.push(text)
    log.info(text)
  }

  // Made once the serving agent exists (below); the catalog asks it only when a client asks.
  let identities: IdentityScopes | undefined
  const resolvedRules = new Map<string, IdentityPolicy>()
  const catalog = createGatewayCatalog({
    connections,
    order,
    prefixOf: (name) => serverPrefix(name, current.servers[name]),
    get policy() {
      return current.policy
    },
    log,
    // The caller's own rules: the same allow, deny and ask globs, written `prompt:…` and `resource:…`.
    callerVerdict: (kind, subject, authInfo) => {
      const identity = identityOf(authInfo)
      if (identity === undefined || identities === undefined || identities.rules.size === 0) return undefined
      const key = identities.rules.keyOf(identity)
      let resolved = resolvedRules.get(key)
      if (resolved === undefined) {
        resolved = identities.rules.resolve(identity)
        // Identities alike share one entry; bounded so made-up callers cannot grow it without end.
        if (resolvedRules.size < 10_000) resolvedRules.set(key, resolved)
      }
      const item = `${kind}:${subject}`
      const refusal = resolved.refusal(item)
      if (refusal !== undefined) return { verdict: 'hidden', reason: refusal }
      const asked = resolved.ask(item)
      if (asked !== undefined)
        return {
          verdict: 'ask',
          reason: `the policy for "${identity.subject}" asks before the ${kind} "${subject}" (ask: "${asked}")`,
        }
      return undefined
    },
  })

  // Opened on first use: only servers with `auth.perUser` need the vault (and its key). With a
  // store, the secrets are the store's, shared by every instance on it.
  let vault: VaultStorage | undefined
  const clients = new McpClientDirectory()
  const callerDeps = {
    identityOf: (exec: ToolRunContext) => identities?.identityOf(exec.agent),
    channelOf: (exec: ToolRunContext) => clients.callOf(exec.rootCallId),
    vault: () => {
      if (settings.vaultKeyFile === undefined)
        throw new ConfigError(
          '--vault-key-file',
          'a server with "auth": { "perUser" } needs the vault key (or $TOOLGATE_VAULT_KEY_FILE)',
        )
      if (vault !== undefined) return vault
      const key = readVaultKey(settings.vaultKeyFile)
      vault =
        settings.store !== undefined
          ? storeVaultStorage(settings.store.url, key)
          : fileVaultStorage(settings.vaultFile ?? 'toolgate.vault.json', key)
      return vault
    },
  }
  const relay = createMcpRelay(clients)
  const clientDeclared = await startup?.clientCapabilities?.()
  const relayed = clientDeclared === undefined ? relay.handlers : handlersForClient(relay.handlers, clientDeclared)
  const connectOne = async (name: string, spec: GatewaySettings['servers'][string], turn?: Promise<void>) => {
    let wasDown = false
    const options: ConnectMcpServerOptions = {
      name,
      prefix: serverPrefix(name, spec),
      maxMessageBytes: settings.maxMessageBytes,
      reconnect: settings.reconnect ?? true,
      onToolSkipped: (skip) => onSkipped(name, skip),
      onLog: relayLog,
      onListChanged: (kind) => catalog.changed(kind),
      onResourceUpdated: (uri, server) => catalog.updated(uri, server),
      ...relayed,
      onElicitationComplete: (id) => relay.onElicitationComplete(id),
      ...(startup?.opened ? { onOpened: (features: McpServerFeatures) => startup.opened?.(name, features) } : {}),
      onStateChange: (state) => {
        if (state.status === 'down') {
          wasDown = true
          // Skips are re-reported when it is listed again.
          skipped.set(name, [])
          if (!settings.check)
            log.info(`${state.error}; its tools are left out, retrying in ${seconds(state.retryInMs)}`)
        } else if (state.status === 'connected' && wasDown) {
          wasDown = false
          log.info(`MCP server "${name}" is back: ${describeTools(connections.get(name))}`)
        }
      },
    }
    const connection = await connectMcpServer(
      ctx,
      withCallerAuth(name, spec, callerDeps),
      turn === undefined ? options : registerInTurn(options, turn),
    )
    startup?.settled?.(name, connection)
    if (connection.state.status === 'connected') log.debug(`MCP server "${name}": ${describeTools(connection)}`)
    return connection
  }
  // The servers start together, but each one's tools are registered after those of the servers
  // before it in the config have been (or failed to be): the gateway lists, and settles a name
  // two of them share, in config order, whichever answered first (the CLI's first listing,
  // raw-first.ts, lists in that order too).
  let before: Promise<unknown> = Promise.resolve()
  const connecting = Promise.all(
    Object.entries(settings.servers).map(async ([name, spec]) => {
      const turn = before.then(() => {})
      const connected = connectOne(name, spec, turn)
      before = Promise.allSettled([turn, connected])
      connections.set(name, await connected)
    }),
  )
  startup?.idle?.()
  await connecting
  starting = false
  // A collision found while starting is reported with both sides (the server first in the config won).
  const collisions: string[] = []
  for (const { server, skip } of startSkips) {
    const owner = ownerOf(skip.name, server)
    const text = skipReason(server, skip, owner)
    skipped.get(server)?.push(text)
    if (owner !== undefined) collisions.push(text)
    else log.info(text)
  }
  // Prompt names and resource URIs two servers share are refused at startup like tool names.
  collisions.push(...catalog.started())

  const stopRoots = clients.onRootsChanged(() => {
    for (const [name, connection] of connections)
      connection
        .notifyRootsChanged()
        .catch((error) => log.info(`MCP server "${name}": ${error instanceof Error ? error.message : String(error)}`))
  })
  const close = async () => {
    stopRoots()
    await Promise.all([...connections.values()].map((connection) => connection.close()))
    await vault?.close()
  }
  const upstreams = (): UpstreamReport[] =>
    order.map((name) => {
      const connection = connections.get(name)
      const state = connection?.state
      return {
        name,
        status: state?.status === 'connected' ? 'connected' : 'down',
        tools: connection?.tools ?? [],
        ...(state?.status === 'down' ? { error: state.error } : {}),
        skipped: [...(skipped.get(name) ?? []), ...catalog.skipped(name)],
        ...(state?.status === 'connected' && connection?.features.protocolVersion !== undefined
          ? { protocolVersion: connection.features.protocolVersion }
          : {}),
      }
    })

  // The journal's `credential` of an upstream call: the caller's own (noted as it was made) or a shared one.
  const credentialOf = (exec: { readonly token: symbol; readonly name: string }) => {
    const own = takeCallCredential(exec)
    if (own !== undefined) return own
    const name = upstreamOf(connections, exec.name)
    return name !== undefined && usesSharedCredential(current.servers[name] ?? { command: '' })
      ? { kind: 'shared' as const }
      : undefined
  }
  const agent = createAgent(ctx, { id: 'toolgate' })
  const names = () => [...own.map((d) => d.name), ...[...connections.values()].flatMap((c) => c.tools)]
  const decider = swappableDecider(configDecider(settings.policy))
  const refreshPolicy = enforcePolicy(agent, decider, names)
  const scopes = identityScopes(agent, settings.policy, names)
  identities = scopes
  const policy = enforceGatewayPolicy(agent, settings.policy, (of) => scopes.identityOf(of))
  if (settings.journal !== undefined && !settings.check) {
    const { Journal } = await import('../journal/journal.js')
    ctx.plugin(Journal, {
      path: settings.journal,
      identify: (of) => scopes.identityOf(of),
      credentialOf,
      policyOf: journalDecision(policy),
    })
  }
  let deferred = deferralPatterns(settings, connections)
  let undefer = deferred.length > 0 ? tools.defer(deferred, agent) : () => {}
  const calls = new ToolCallsInFlight()
  calls.install(ctx)
  const reloadParts = {
    connections,
    order,
    connect: connectOne,
    forget: (name: string) => void skipped.delete(name),
    swapPolicy(next: GatewaySettings) {
      current = next
      decider.set(configDecider(next.policy))
      policy.swap(next.policy)
      scopes.reload(next.policy)
      resolvedRules.clear()
      refreshPolicy()
      const patterns = deferralPatterns(next, connections)
      if (JSON.stringify(patterns) === JSON.stringify(deferred)) return
      undefer()
      deferred = patterns
      undefer = patterns.length > 0 ? tools.defer(patterns, agent) : () => {}
    },
    catalogChanged() {
      catalog.changed('resources')
      catalog.changed('prompts')
    },
    calls,
  }
  // Each client's level, by its subscription: the upstreams are asked for the lowest of them, so
  // that no client misses a message at its own level because another asked for less.
  const clientLevels = new Map<(message: McpLogMessage) => void, McpLogLevel | undefined>()
  let upstreamLevel: McpLogLevel | undefined
  const forwardLevel = async () => {
    const set = [...clientLevels.values()].filter((level) => level !== undefined)
    if (set.length === 0) return
    const lowest = set.reduce((a, b) => (MCP_LOG_LEVELS.indexOf(b) < MCP_LOG_LEVELS.indexOf(a) ? b : a))
    if (lowest === upstreamLevel) return
    upstreamLevel = lowest
    // One upstream failing to take the level does not fail the client's request: the others did.
    await Promise.all(
      [...connections].map(([name, connection]) =>
        connection
          .setLogLevel(lowest)
          .catch((error) =>
            log.info(`MCP server "${name}": ${error instanceof Error ? error.message : String(error)}`),
          ),
      ),
    )
  }
  const logging: McpServerLogging = {
    subscribe(listener) {
      logListeners.add(listener)
      clientLevels.set(listener, undefined)
      return () => {
        logListeners.delete(listener)
        clientLevels.delete(listener)
        void forwardLevel()
      }
    },
    async setLevel(level, subscriber) {
      clientLevels.set(subscriber, level)
      await forwardLevel()
    },
  }
  return {
    ctx,
    tools,
    agent,
    identities: scopes,
    policy,
    get deferring() {
      return deferred.length > 0
    },
    connections,
    upstreams,
    collisions,
    logging,
    catalog: () => catalog.serve(),
    clients,
    credentialOf,
    reconfigure: (next) => {
      for (const name of Object.keys(next.servers)) if (!skipped.has(name)) skipped.set(name, [])
      return reloadGateway(reloadParts, current, next, log)
    },
    close,
  }
}

/** Refuse to go on with tools that two servers name (see {@link Gateway.collisions}). */
export async function refuseCollisions(gateway: Gateway): Promise<void> {
  if (gateway.collisions.length === 0) return
  await gateway.close()
  throw new ConfigError('servers', [...gateway.collisions])
}

function describeTools(connection: McpConnection | undefined): string {
  const tools = connection?.tools ?? []
  return `${tools.length} tool${tools.length === 1 ? '' : 's'}${tools.length ? ` (${tools.join(', ')})` : ''}`
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}
