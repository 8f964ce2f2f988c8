// The gateway's resources, prompts and completions: every upstream's, aggregated. Prompt names get
// the server's prefix (as tools do); resource URIs are served as they are and each one (and each
// URI template) is routed back to the server that lists it. A name or URI that two servers both
// offer is served by one and reported naming both; the policy hides, refuses and asks.
import { UriTemplate } from '@modelcontextprotocol/server'
import {
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  JsonRpcCode,
  type McpConnection,
  type McpListKind,
  McpRequestError,
  type McpResourceSubscriber,
  type McpServeContext,
  type McpServerCatalog,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '../mcp/gateway.js'
import { previewJson } from '../scheduling/preview.js'
import type { PolicyConfig } from './config.js'
import type { Log } from './log.js'
import { type CatalogVerdict, catalogVerdict } from './resource-policy.js'
import { normalizeResourceUri } from './resource-uri.js'

/** JSON-RPC codes the gateway answers with itself. */

/** Who serves one prompt name, resource URI or URI template. */
interface Owned<T> {
  readonly server: string
  readonly item: T
}

/** The routing tables, rebuilt whenever an upstream's lists change. */
interface Tables {
  /** Served (prefixed) prompt name → owner, with the server's own name. */
  readonly prompts: Map<string, Owned<Prompt> & { readonly remote: string }>
  readonly resources: Map<string, Owned<Resource>>
  readonly templates: Map<string, Owned<ResourceTemplate> & { readonly match: UriTemplate | undefined }>
}

export interface GatewayCatalog {
  /** Tell the catalog an upstream's lists changed (connectMcpServer's `onListChanged`). */
  changed(kind: McpListKind): void
  /** An upstream's `notifications/resources/updated` (connectMcpServer's `onResourceUpdated`). */
  updated(uri: string, server: string): void
  /**
   * Build the tables once every upstream was tried, and return the collisions found (lines
   * naming both servers); after this, collisions that appear are logged.
   */
  started(): string[]
  /** Each server's prompts and resources that are not served, with why. */
  skipped(server: string): string[]
  /** What to serve to a new client: only the parts some upstream offers or may offer. */
  serve(): McpServerCatalog | undefined
}

export interface GatewayCatalogOptions {
  readonly connections: ReadonlyMap<string, McpConnection>
  /** Server names in config order: the first one listing a name serves it. */
  readonly order: readonly string[]
  readonly prefixOf: (server: string) => string
  readonly policy: PolicyConfig | undefined
  /**
   * What the caller's own rules (`policy.rules`) say of a prompt or resource the top-level policy
   * lets through: hidden, asked, or undefined for no further word.
   */
  readonly callerVerdict?: (
    kind: 'prompt' | 'resource',
    subject: string,
    authInfo: unknown,
  ) => CatalogVerdict | undefined
  readonly log: Log
}

export function createGatewayCatalog(options: GatewayCatalogOptions): GatewayCatalog {
  // The policy is read at each use: a reload replaces it.
  const { connections, order, prefixOf, log } = options
  /** The top-level policy first (it applies to everyone), then the caller's rules. */
  const verdictOf = (kind: 'prompt' | 'resource', raw: string, context: McpServeContext | undefined) => {
    // A resource is judged in its normal form, so no other spelling of a denied URI passes.
    const normal = kind === 'resource' ? normalizeResourceUri(raw) : undefined
    const subject = normal?.ok ? normal.uri : raw
    const verdict = catalogVerdict(options.policy, kind, subject)
    if (verdict.verdict === 'hidden' || options.callerVerdict === undefined || context?.authInfo === undefined)
      return verdict
    return options.callerVerdict(kind, subject, context.authInfo) ?? verdict
  }
  let tables: Tables = { prompts: new Map(), resources: new Map(), templates: new Map() }
  let starting = true
  /** The collision lines of the last rebuild, by server, and those already logged. */
  let skippedBy = new Map<string, string[]>()
  const logged = new Set<string>()
  const watchers = new Set<(kind: McpListKind) => void>()
  /** Downstream subscribers by URI, with the server the subscription went to. */
  const subscriptions = new Map<string, { server: string; subscribers: Set<McpResourceSubscriber> }>()

  const live = () =>
    order.flatMap((name) => {
      const connection = connections.get(name)
      return connection ? [[name, connection] as const] : []
    })

  /**
   * One table, keeping the current owner of a key while it still offers it (a client never sees a
   * name change its server) and otherwise giving it to the first server in config order.
   */
  function claim<T, O extends Owned<T>>(
    previous: Map<string, O>,
    offers: [server: string, key: string, owned: O][],
    describe: (server: string, key: string, owner: string) => string,
    lines: Map<string, string[]>,
  ): Map<string, O> {
    const table = new Map<string, O>()
    const offering = new Set(offers.map(([server, key]) => `${server}\n${key}`))
    for (const [server, key, owned] of offers) {
      const kept = previous.get(key)
      const keptStillOffers = kept !== undefined && offering.has(`${kept.server}\n${key}`)
      if (kept?.server === server || (!table.has(key) && !keptStillOffers)) table.set(key, owned)
    }
    for (const [server, key] of offers) {
      const owner = table.get(key)
      if (owner !== undefined && owner.server !== server) lines.get(server)?.push(describe(server, key, owner.server))
    }
    return table
  }

  function rebuild(): void {
    const lines = new Map<string, string[]>(order.map((name) => [name, []]))
    const prompts: [string, string, Owned<Prompt> & { remote: string }][] = []
    const resources: [string, string, Owned<Resource>][] = []
    const templates: [string, string, Owned<ResourceTemplate> & { match: UriTemplate | undefined }][] = []
    for (const [server, connection] of live()) {
      const prefix = prefixOf(server)
      for (const prompt of connection.prompts)
        prompts.push([server, prefix + prompt.name, { server, item: prompt, remote: prompt.name }])
      for (const resource of connection.resources) resources.push([server, resource.uri, { server, item: resource }])
      for (const template of connection.resourceTemplates)
        templates.push([server, template.uriTemplate, { server, item: template, match: matcher(template.uriTemplate) }])
    }
    // While starting, servers answer in any order: ownership then follows the config order alone.
    const previous: Tables = starting ? { prompts: new Map(), resources: new Map(), templates: new Map() } : tables
    tables = {
      prompts: claim(
        previous.prompts,
        prompts,
        (server, name, owner) =>
          `servers.${server}: its prompt "${name.slice(prefixOf(server).length)}" is not served: the name "${name}" is already served by servers.${owner} (set a different "prefix" on one of them)`,
        lines,
      ),
      resources: claim(
        previous.resources,
        resources,
        (server, uri, owner) =>
          `servers.${server}: its resource "${uri}" is not served: the URI is already served by servers.${owner} (URIs are not renamed; drop one of the servers or deny the URI on it)`,
        lines,
      ),
      templates: claim(
        previous.templates,
        templates,
        (server, template, owner) =>
          `servers.${server}: its resource template "${template}" is not served: it is already served by servers.${owner}`,
        lines,
      ),
    }
    skippedBy = lines
    if (starting) return
    for (const text of [...lines.values()].flat()) {
      if (logged.has(text)) continue
      logged.add(text)
      log.info(text)
    }
  }

  /** Which server a URI belongs to: the one listing it, else the first template that matches. */
  function route(uri: string): string | undefined {
    const listed = tables.resources.get(uri)
    if (listed !== undefined) return listed.server
    for (const owned of tables.templates.values()) if (owned.match?.match(uri)) return owned.server
    // An unlisted URI can still be readable; with one server offering resources there is no doubt.
    const offering = live().filter(([, connection]) => connection.features.resources)
    return offering.length === 1 ? offering[0]?.[0] : undefined
  }

  function connectionOf(server: string): McpConnection {
    const connection = connections.get(server)
    if (connection === undefined)
      throw new McpRequestError(
        `servers.${server} is not connected`,
        JsonRpcCode.ServerError,
        `servers.${server} is not connected`,
      )
    return connection
  }

  /**
   * The resource's server and the URI it is sent, or the error the client gets: not normalizable,
   * not found, or hidden by the policy. A URI an upstream lists goes to it as listed; any other
   * goes in the normal form the policy judged, so the upstream reads exactly what was allowed.
   */
  function resourceServer(uri: string, context: McpServeContext | undefined): { server: string; uri: string } {
    const normal = normalizeResourceUri(uri)
    if (!normal.ok) throw refused(JsonRpcCode.InvalidParams, `Invalid resource URI: ${normal.reason}`)
    const verdict = verdictOf('resource', uri, context)
    if (verdict.verdict === 'hidden') throw refused(JsonRpcCode.ResourceNotFound, verdict.reason)
    const forwarded = tables.resources.has(uri) ? uri : normal.uri
    const server = route(forwarded)
    if (server === undefined)
      throw refused(
        JsonRpcCode.ResourceNotFound,
        `Resource ${uri} not found: no upstream server lists it or a template matching it`,
      )
    return { server, uri: forwarded }
  }

  async function askIfNeeded(
    verdict: CatalogVerdict,
    context: McpServeContext,
    question: string,
    title: string,
    code: number,
  ): Promise<void> {
    if (verdict.verdict !== 'ask') return
    const answer = await context.confirm(`${question}\nReason asked: ${verdict.reason}`, title)
    if (!answer.approved) throw refused(code, `${title.replace(/ once$/, '')} was not approved: ${answer.reason}`)
  }

  const visibleResource = (uri: string, context: McpServeContext) =>
    verdictOf('resource', uri, context).verdict !== 'hidden'

  const resources: NonNullable<McpServerCatalog['resources']> = {
    list: async (context) =>
      [...tables.resources.values()]
        .map((owned) => owned.item)
        .filter((resource) => visibleResource(resource.uri, context)),
    templates: async (context) =>
      [...tables.templates.values()]
        .map((owned) => owned.item)
        .filter((template) => visibleResource(template.uriTemplate, context)),
    async read(asked, context): Promise<ReadResourceResult> {
      const { server, uri } = resourceServer(asked, context)
      await askIfNeeded(
        verdictOf('resource', uri, context),
        context,
        `Allow reading the resource ${uri}?`,
        `Allow reading ${uri} once`,
        JsonRpcCode.ResourceNotFound,
      )
      return connectionOf(server).readResource(uri, { signal: context.signal })
    },
    async subscribe(asked, subscriber, context) {
      const { server, uri } = resourceServer(asked, context)
      const connection = connectionOf(server)
      if (!connection.features.subscribe)
        throw refused(JsonRpcCode.MethodNotFound, `servers.${server} does not support resource subscriptions`)
      const existing = subscriptions.get(uri)
      if (existing !== undefined) {
        existing.subscribers.add(subscriber)
        return
      }
      const entry = { server, subscribers: new Set([subscriber]) }
      subscriptions.set(uri, entry)
      try {
        await connection.subscribeResource(uri)
      } catch (error) {
        if (subscriptions.get(uri) === entry) subscriptions.delete(uri)
        throw error
      }
    },
    async unsubscribe(asked, subscriber) {
      const normal = normalizeResourceUri(asked)
      const uri = subscriptions.has(asked) || !normal.ok ? asked : normal.uri
      const entry = subscriptions.get(uri)
      if (entry === undefined || !entry.subscribers.delete(subscriber) || entry.subscribers.size > 0) return
      subscriptions.delete(uri)
      await connections.get(entry.server)?.unsubscribeResource(uri)
    },
  }

  const promptOwner = (name: string, context: McpServeContext | undefined) => {
    const verdict = verdictOf('prompt', name, context)
    if (verdict.verdict === 'hidden') throw refused(JsonRpcCode.InvalidParams, verdict.reason)
    const owned = tables.prompts.get(name)
    if (owned === undefined) throw refused(JsonRpcCode.InvalidParams, `Prompt ${name} not found`)
    return { owned, verdict }
  }

  const prompts: NonNullable<McpServerCatalog['prompts']> = {
    list: async (context) =>
      [...tables.prompts.entries()]
        .filter(([name]) => verdictOf('prompt', name, context).verdict !== 'hidden')
        .map(([name, owned]) => ({ ...owned.item, name })),
    async get(name, args, context): Promise<GetPromptResult> {
      const { owned, verdict } = promptOwner(name, context)
      await askIfNeeded(
        verdict,
        context,
        `Allow the prompt ${name}?\nArguments: ${previewJson(args, 1000)}`,
        `Allow ${name} once`,
        JsonRpcCode.InvalidParams,
      )
      // What the upstream asks to finish it goes to the client that asked for it (a 2026-07-28
      // client's context has no `input`: it answers by retrying, see server-modern.ts).
      return connectionOf(owned.server).getPrompt(owned.remote, args, {
        signal: context.signal,
        ...(context.input ? { input: context.input } : {}),
      })
    },
  }

  async function complete(params: CompleteRequest['params'], context: McpServeContext): Promise<CompleteResult> {
    const { ref } = params
    let server: string
    let forwarded = params
    if (ref.type === 'ref/prompt') {
      const { owned } = promptOwner(ref.name, context)
      server = owned.server
      forwarded = { ...params, ref: { ...ref, name: owned.remote } }
    } else {
      const template = tables.templates.get(ref.uri)
      if (template !== undefined && visibleResource(ref.uri, context)) server = template.server
      else server = resourceServer(ref.uri, context).server
    }
    const connection = connectionOf(server)
    // A server without completions has nothing to suggest; that is an empty answer, not an error.
    if (!connection.features.completions) return { completion: { values: [] } }
    return connection.complete(forwarded, { signal: context.signal })
  }

  /** A feature is served when some upstream declared it, or one has not answered yet and may. */
  const offered = (feature: 'resources' | 'subscribe' | 'prompts' | 'completions') =>
    live().some(([, connection]) => connection.state.status !== 'connected' || connection.features[feature])

  return {
    changed(kind) {
      rebuild()
      for (const watcher of watchers) watcher(kind)
    },
    updated(uri, server) {
      const entry = subscriptions.get(uri)
      if (entry?.server !== server) return
      for (const subscriber of entry.subscribers) subscriber(uri)
    },
    started() {
      rebuild()
      starting = false
      const lines = [...skippedBy.values()].flat()
      for (const text of lines) logged.add(text)
      return lines
    },
    skipped: (server) => skippedBy.get(server) ?? [],
    serve() {
      const watch = (listener: (kind: McpListKind) => void) => {
        watchers.add(listener)
        return () => void watchers.delete(listener)
      }
      const parts: { -readonly [K in keyof McpServerCatalog]: McpServerCatalog[K] } = {}
      if (offered('resources')) {
        const { subscribe, unsubscribe, ...rest } = resources
        parts.resources = offered('subscribe') ? resources : rest
      }
      if (offered('prompts')) parts.prompts = prompts
      if (offered('completions')) parts.complete = complete
      if (Object.keys(parts).length === 0) return undefined
      parts.watch = watch
      return parts
    },
  }
}

function matcher(template: string): UriTemplate | undefined {
  try {
    return new UriTemplate(template)
  } catch {
    return undefined
  }
}

function refused(code: number, reason: string): McpRequestError {
  return new McpRequestError(reason, code, reason)
}
