// What an imported MCP server offers besides tools: its resources (with templates and
// subscriptions), its prompts and its completions. Kept per connection, listed again on every new
// session and on each list_changed, and used only when the server declared the capability.
import { ToolgateError } from '../../errors/toolgate-error.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { McpListKind } from '../protocol/list-kind.js'
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
} from '../protocol/wire-types.js'
import type { UpstreamClient } from './upstream-client.js'

/** Which of resources, subscriptions, prompts and completions a server declared. */
export interface McpServerFeatures {
  readonly resources: boolean
  /** It takes `resources/subscribe` and sends `notifications/resources/updated`. */
  readonly subscribe: boolean
  readonly prompts: boolean
  readonly completions: boolean
  /** The protocol revision the session negotiated (`2025-11-25`, …), when the transport was told it. */
  readonly protocolVersion?: string
}

/** Options of a request to the server. */
export interface McpRequestOptions {
  /** Cancels the request (the server is sent `notifications/cancelled`). */
  readonly signal?: AbortSignal
}

const NO_FEATURES: McpServerFeatures = Object.freeze({
  resources: false,
  subscribe: false,
  prompts: false,
  completions: false,
})

/**
 * A request about a server's resources, prompts or completions failed. `rpcCode` and `reason` are
 * the JSON-RPC error the server answered with (say -32002 "Resource not found"), or what toolgate
 * concluded itself (-32601 when the server did not declare the capability, -32000 when it closed).
 */
export class McpRequestError extends ToolgateError {
  readonly code = 'MCP_REQUEST_FAILED' as const
  constructor(
    message: string,
    /** The JSON-RPC error code to pass on. */
    readonly rpcCode: number,
    /** The error message without toolgate's framing (the server's own, when it answered one). */
    readonly reason: string,
    /** The error's `data`, when the server sent some. */
    readonly data?: unknown,
  ) {
    super(message)
    this.name = 'McpRequestError'
  }
}

/** The notifications a catalog follows. */
export type CatalogNotification =
  | 'notifications/resources/list_changed'
  | 'notifications/prompts/list_changed'
  | 'notifications/resources/updated'

/** What the catalog needs from the link it belongs to. */
export interface CatalogHost {
  /** The live session's client, opening one when there is none. */
  client(): Promise<UpstreamClient>
  /**
   * Whether `error` says the server forgot the session of `client` (it then dropped it): the
   * request was refused unread, and is sent once more on a new session.
   */
  forgotten?(client: UpstreamClient, error: unknown): boolean
  /** Why the session of `client` was dropped for a message over the size limit, if it was. */
  oversized?(client: UpstreamClient): string | undefined
  /** The server's name as messages show it (quoted). */
  readonly label: string
  readonly timeoutMs: number
  /** An error's message with the spec's secrets masked. */
  reason(error: unknown): string
  warn(text: string): void
  readonly onResourceUpdated: ((uri: string) => void) | undefined
  readonly onListChanged: ((kind: McpListKind) => void) | undefined
}

/** One connection's resources, templates and prompts, and the requests that use them. */
export class UpstreamCatalog {
  features: McpServerFeatures = NO_FEATURES
  resources: readonly Resource[] = []
  templates: readonly ResourceTemplate[] = []
  prompts: readonly Prompt[] = []
  /** The URIs subscribed to, sent again to every new session. */
  private readonly subscribed = new Set<string>()
  private listing: Promise<void> = Promise.resolve()
  /** Kinds whose re-listing is queued and not started yet. */
  private readonly queued = new Set<McpListKind>()

  constructor(private readonly host: CatalogHost) {}

  /**
   * Follow a new session's notifications; call before it connects. `on` registers a handler by
   * method name (the SDK v2 Client's `setNotificationHandler`).
   */
  install(on: (method: CatalogNotification, handler: (params: { uri?: unknown }) => void) => void): void {
    const { host } = this
    on('notifications/resources/list_changed', () => this.changed('resources'))
    on('notifications/prompts/list_changed', () => this.changed('prompts'))
    on('notifications/resources/updated', (params) => {
      try {
        host.onResourceUpdated?.(String(params.uri))
      } catch (error) {
        host.warn(`MCP server ${host.label}: the onResourceUpdated callback threw: ${host.reason(error)}`)
      }
    })
  }

  /** A session opened: note what it declared and subscribe again to what was subscribed. */
  opened(client: UpstreamClient, protocolVersion: string | undefined): void {
    const declared = client.getServerCapabilities()
    this.features = Object.freeze({
      resources: declared?.resources !== undefined,
      subscribe: declared?.resources?.subscribe === true,
      prompts: declared?.prompts !== undefined,
      completions: declared?.completions !== undefined,
      ...(protocolVersion === undefined ? {} : { protocolVersion }),
    })
    if (!this.features.subscribe) return
    for (const uri of this.subscribed)
      client
        .subscribeResource({ uri }, { timeout: this.host.timeoutMs })
        .catch((error) =>
          this.host.warn(
            `MCP server ${this.host.label}: subscribing again to ${uri} failed: ${this.host.reason(error)}`,
          ),
        )
  }

  /** List everything the server declared (a failed list is warned about and counts as empty). */
  sync(client: UpstreamClient): Promise<void> {
    const run = async () => {
      await Promise.all([this.relist(client, 'resources'), this.relist(client, 'prompts')])
    }
    // In line with the re-listings of list_changed, so an older listing never lands last.
    const listed = this.listing.then(run, run)
    this.listing = listed.catch(() => {})
    return listed
  }

  /** The server is down or closed: nothing is offered until it is listed again. */
  clear(tell: boolean): void {
    const hadResources = this.resources.length + this.templates.length > 0
    const hadPrompts = this.prompts.length > 0
    this.resources = []
    this.templates = []
    this.prompts = []
    if (tell && hadResources) this.tell('resources')
    if (tell && hadPrompts) this.tell('prompts')
  }

  private changed(kind: McpListKind): void {
    // A listing of this kind queued and not started yet answers this notification too: a burst
    // lists once after the listing in flight, not once per notification.
    if (this.queued.has(kind)) return
    this.queued.add(kind)
    const run = async () => {
      this.queued.delete(kind)
      const client = await this.host.client()
      await this.relist(client, kind)
    }
    // Queued on the next turn, so that the notifications read with this one share it; serialized,
    // so the last listing wins.
    setImmediate(() => {
      this.listing = this.listing.then(run, run).catch((error) => {
        this.host.warn(`MCP server ${this.host.label}: re-listing ${kind} failed: ${this.host.reason(error)}`)
      })
    })
  }

  /** List one kind again and tell the listener when it changed. */
  private async relist(client: UpstreamClient, kind: McpListKind): Promise<void> {
    const before = this.key(kind)
    if (kind === 'resources') {
      const [resources, templates] = this.features.resources
        ? await Promise.all([
            this.all(kind, (cursor) =>
              client.listResources(cursor, { timeout: this.host.timeoutMs }).then((page) => ({
                items: page.resources,
                next: page.nextCursor,
              })),
            ),
            this.all('resource templates', (cursor) =>
              client.listResourceTemplates(cursor, { timeout: this.host.timeoutMs }).then((page) => ({
                items: page.resourceTemplates,
                next: page.nextCursor,
              })),
            ),
          ])
        : [[], []]
      this.resources = resources
      this.templates = templates
    } else {
      this.prompts = this.features.prompts
        ? await this.all(kind, (cursor) =>
            client.listPrompts(cursor, { timeout: this.host.timeoutMs }).then((page) => ({
              items: page.prompts,
              next: page.nextCursor,
            })),
          )
        : []
    }
    if (this.key(kind) !== before) this.tell(kind)
  }

  /** Every page of one list; a failure is warned about and leaves the list empty. */
  private async all<T>(
    what: string,
    page: (params: { cursor: string } | undefined) => Promise<{ items: T[]; next: string | undefined }>,
  ): Promise<T[]> {
    const items: T[] = []
    try {
      let cursor: string | undefined
      do {
        const got = await page(cursor === undefined ? undefined : { cursor })
        items.push(...got.items)
        cursor = got.next
      } while (cursor !== undefined)
      return items
    } catch (error) {
      this.host.warn(`MCP server ${this.host.label}: listing its ${what} failed: ${this.host.reason(error)}`)
      return []
    }
  }

  private key(kind: McpListKind): string {
    try {
      return JSON.stringify(kind === 'resources' ? [this.resources, this.templates] : this.prompts)
    } catch {
      // Unserializable can only mean a new listing: treat it as a change.
      return String(Math.random())
    }
  }

  private tell(kind: McpListKind): void {
    try {
      this.host.onListChanged?.(kind)
    } catch (error) {
      this.host.warn(`MCP server ${this.host.label}: the onListChanged callback threw: ${this.host.reason(error)}`)
    }
  }

  async readResource(uri: string, options: McpRequestOptions = {}): Promise<ReadResourceResult> {
    return this.request('resources/read', (client) => client.readResource({ uri }, this.requestOptions(options)))
  }

  /** Subscribe (remembered, and sent again to every new session). */
  async subscribeResource(uri: string): Promise<void> {
    await this.request('resources/subscribe', (client) =>
      client.subscribeResource({ uri }, { timeout: this.host.timeoutMs }),
    )
    this.subscribed.add(uri)
  }

  async unsubscribeResource(uri: string): Promise<void> {
    if (!this.subscribed.delete(uri) || !this.features.subscribe) return
    await this.request('resources/unsubscribe', (client) =>
      client.unsubscribeResource({ uri }, { timeout: this.host.timeoutMs }),
    )
  }

  async getPrompt(
    name: string,
    args: Readonly<Record<string, string>> | undefined,
    options: McpRequestOptions = {},
  ): Promise<GetPromptResult> {
    return this.request('prompts/get', (client) =>
      client.getPrompt({ name, ...(args ? { arguments: { ...args } } : {}) }, this.requestOptions(options)),
    )
  }

  async complete(params: CompleteRequest['params'], options: McpRequestOptions = {}): Promise<CompleteResult> {
    return this.request('completion/complete', (client) => client.complete(params, this.requestOptions(options)))
  }

  private requestOptions(options: McpRequestOptions) {
    return { timeout: this.host.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) }
  }

  private undeclared(method: string): McpRequestError {
    return new McpRequestError(
      `MCP server ${this.host.label} does not offer ${method} (it did not declare the capability)`,
      JsonRpcCode.MethodNotFound,
      'Method not found',
    )
  }

  private async request<T>(method: string, send: (client: UpstreamClient) => Promise<T>, retried = false): Promise<T> {
    let client: UpstreamClient
    try {
      client = await this.host.client()
    } catch (error) {
      throw new McpRequestError(
        `MCP server ${this.host.label}: ${this.host.reason(error)}`,
        JsonRpcCode.ConnectionClosed,
        'Connection closed',
      )
    }
    // What the server declared is known once a session is open, which host.client() ensures.
    if (!this.declares(method)) throw this.undeclared(method)
    try {
      return await send(client)
    } catch (error) {
      if (!retried && this.host.forgotten?.(client, error)) return this.request(method, send, true)
      const e = error as { code?: unknown; data?: unknown }
      const code = typeof e?.code === 'number' && Number.isSafeInteger(e.code) ? e.code : JsonRpcCode.InternalError
      // A message over the size limit closes the connection: say which limit, not "Connection closed".
      const oversized = code === JsonRpcCode.ConnectionClosed ? this.host.oversized?.(client) : undefined
      const reason = oversized ?? this.host.reason(error).replace(/^MCP error -?\d+: /, '')
      throw new McpRequestError(`MCP server ${this.host.label}: ${method} failed: ${reason}`, code, reason, e?.data)
    }
  }

  /** Whether the method's capability is declared, looked up again after the session opened. */
  private declares(method: string): boolean {
    const f = this.features
    if (method === 'resources/subscribe' || method === 'resources/unsubscribe') return f.subscribe
    if (method.startsWith('resources/')) return f.resources
    if (method.startsWith('prompts/')) return f.prompts
    return f.completions
  }
}
