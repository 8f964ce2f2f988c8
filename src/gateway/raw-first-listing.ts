// The upstreams' side of `serve`'s first listing, shared by its stdio face (raw-first.ts) and its
// HTTP face (raw-first-http.ts): which configs it lists for, every upstream's handshake and
// `tools/list` run at once as plain JSON-RPC over the processes spawned early
// (raw-first-upstream.ts), and the listing made from their answers in the gateway's order (its own
// tools, then each upstream's in the config's order). Anything it cannot list as the gateway would
// is reported as a reason, and the gateway lists instead.
import type { Writable } from 'node:stream'
import {
  type McpServerFeatures,
  peekEarlySpawns,
  type ServerCapabilities,
  type SpawnedStdio,
  type StdioSpawnSpec,
  type Tool,
} from '../mcp/gateway.js'
import { serverPrefix } from './config.js'
import { earlyCapabilities } from './early-capabilities.js'
import { ownToolsBeforeLoad, withOwnTools } from './raw-first-own.js'
import { rawUpstream } from './raw-first-upstream.js'
import type { GatewaySettings } from './settings.js'

/** The only revision the first listing speaks, both ways; any other is the gateway's to negotiate. */
export const REVISION = '2025-11-25'
/** The upstream session's `clientInfo` (the SDK Client's, see legacy-session.ts). */
export const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' }
/** The envelope key of MCP 2026-07-28 that claims a request's protocol version. */
export const PROTOCOL_VERSION_CLAIM = 'io.modelcontextprotocol/protocolVersion'

export type ListingSettings = Pick<
  GatewaySettings,
  | 'http'
  | 'check'
  | 'files'
  | 'bash'
  | 'mode'
  | 'policy'
  | 'deferAbove'
  | 'auth'
  | 'store'
  | 'servers'
  | 'maxMessageBytes'
  | 'root'
>

interface ListedServer {
  readonly spec: StdioSpawnSpec
  readonly prefix: string
}

/**
 * The config's servers, in its order, when the first listing can serve them all on `face`: each a
 * stdio server spawned as it is written (no sandbox), listed at once (no `defer`). Else undefined.
 */
export function listedServers(settings: ListingSettings, face: 'stdio' | 'http'): ListedServer[] | undefined {
  if (process.platform === 'win32' || settings.check) return undefined
  if ((face === 'http') !== (settings.http !== undefined)) return undefined
  if (settings.bash || settings.mode !== 'native') return undefined
  if (Object.keys(settings.policy).length > 0 || settings.deferAbove !== undefined) return undefined
  if (settings.auth !== undefined || settings.store !== undefined) return undefined
  const servers: ListedServer[] = []
  for (const [name, spec] of Object.entries(settings.servers)) {
    if (!('command' in spec) || spec.sandbox !== undefined || spec.defer !== undefined) return undefined
    servers.push({ spec, prefix: serverPrefix(name, spec) })
  }
  return servers.length > 0 ? servers : undefined
}

/** What the listing tells its face. */
export interface ListingEvents {
  /** Whether the face is done (given up or answered): what comes after is only tidied up. */
  ended(): boolean
  /** Every upstream answered its `initialize`: what the gateway will declare to its client. */
  declared(capabilities: ServerCapabilities): void
  /** Every upstream listed: the whole listing, as the gateway lists it. */
  listed(tools: Tool[]): void
  /** It cannot be listed here: why. */
  failed(why: string): void
}

/** The upstreams of one listing, spawned early and not yet asked anything. */
export interface UpstreamListing {
  /** Send every upstream its `initialize` with these params (once), then its `tools/list`. */
  initialize(params: Readonly<Record<string, unknown>>): void
}

/**
 * The upstreams of `settings` ready to be listed on `face`, or why the first listing does not
 * apply (a reason for the debug log).
 */
export function upstreamListing(
  settings: ListingSettings,
  face: 'stdio' | 'http',
  events: ListingEvents,
): UpstreamListing | { reason: string } {
  const servers = listedServers(settings, face)
  if (servers === undefined) return { reason: 'not a config it lists for' }
  const own = ownToolsBeforeLoad(settings)
  if ('reason' in own) return { reason: own.reason }
  const ownTools = own.tools
  const found: { spawned: SpawnedStdio; input: Writable; prefix: string }[] = []
  for (const [at, spawned] of peekEarlySpawns(servers.map(({ spec }) => spec)).entries()) {
    const input = spawned?.child.stdin
    // One not spawned early, or gone already, is the gateway's to start and report.
    if (spawned === undefined || input == null || spawned.child.exitCode !== null)
      return { reason: 'an upstream was not spawned early, or has ended' }
    found.push({ spawned, input, prefix: servers[at]?.prefix ?? '' })
  }
  /** What each upstream declared and listed, by its place in the config, as each answers. */
  const features: (McpServerFeatures | undefined)[] = found.map(() => undefined)
  const listings: (Tool[] | undefined)[] = found.map(() => undefined)

  /**
   * Whether, once every upstream declared itself, two of them may offer one resource URI or one
   * prompt name: the gateway lists those at its start and refuses to start on such a collision,
   * so the first listing, which does not list them, leaves that case to it. URIs are never
   * prefixed; prompt names are, so only servers sharing a prefix (the empty one) can collide.
   */
  const mayCollide = (): boolean => {
    const resources = features.filter((declared) => declared?.resources).length
    const prompts = found.filter(({ prefix }, at) => prefix === '' && features[at]?.prompts).length
    return resources > 1 || prompts > 1
  }

  /**
   * The own tools, then every upstream's in config order, once all are listed; a name listed twice
   * (across upstreams, or an own tool's) is the gateway's to settle.
   */
  const combine = (): void => {
    if (events.ended() || listings.some((listed) => listed === undefined)) return
    const all = listings.flatMap((listed) => listed ?? [])
    const names = new Set(all.map((tool) => tool.name))
    const combined = names.size === all.length ? withOwnTools(ownTools, all) : undefined
    if (combined === undefined)
      events.failed('an upstream tool the gateway would not serve (or serves under another name)')
    else events.listed(combined)
  }

  const upstreams = found.map(({ spawned, input, prefix }, at) =>
    rawUpstream(spawned, input, prefix, REVISION, {
      ended: () => events.ended(),
      initialized(declared) {
        features[at] = declared
        if (features.some((f) => f === undefined)) return
        if (mayCollide()) events.failed('two upstreams that may offer one resource URI or prompt name')
        else events.declared(earlyCapabilities(features))
      },
      listed(listed) {
        listings[at] = listed
        combine()
      },
      failed: (why) => events.failed(why),
    }),
  )
  return {
    initialize(params) {
      for (const upstream of upstreams) upstream.initialize(params)
    },
  }
}
