// Sessions with one HTTP upstream kept apart by partition (in the gateway: one per caller), for an
// upstream whose credential differs per caller: each partition has its own MCP session and its own
// headers, so nothing of one caller's session (its id, its credential, what the server keeps for
// it) can reach another's call. The shared session of the link still lists the tools.
import type { ToolExecution, ToolRunContext } from '../../contract/execution.js'
import type { McpCapabilityHandlers } from '../protocol/capability-handlers.js'
import type { LegacyClient } from './legacy-session.js'

/** How the calls of one HTTP server are split into sessions, and the headers each session sends. */
export interface McpSessionPartition {
  /**
   * The partition a call runs in (e.g. the caller's subject); throws a ToolgateError that says why
   * when the call cannot be made (no caller, no credential). It may wait (for a person to sign in).
   */
  keyOf(exec: ToolRunContext): string | Promise<string>
  /**
   * The headers of a request in partition `key`, asked before each request; after a 401, asked once
   * more with the headers that were refused (renew the credential, then the request is sent again).
   */
  headers(key: string, refused?: Readonly<Record<string, string>>): Promise<Readonly<Record<string, string>>>
}

/** How a partition's sessions are opened, and how they answer what the server asks of its client. */
export interface PartitionSessionOptions {
  readonly maxMessageBytes: number
  readonly timeoutMs: number
  /** The label of the server in messages. */
  readonly label: string
  /** The link's capability handlers: a partition's session declares and answers the same. */
  readonly handlers: McpCapabilityHandlers
  /** The calls running (or abandoned) on `client`: only those of its own partition. */
  calls(client: LegacyClient): readonly ToolExecution[]
  onElicitationComplete?: ((elicitationId: string) => void) | undefined
}

/** Partitions kept open at most; past this the least recently used one is closed. */
const MAX_PARTITIONS = 10_000

/** The open sessions of one server's partitions, opened on first use. */
export class PartitionedSessions {
  private readonly sessions = new Map<string, Promise<LegacyClient>>()

  constructor(
    private readonly url: string,
    private readonly headers: Readonly<Record<string, string>> | undefined,
    private readonly partition: McpSessionPartition,
    private readonly options: PartitionSessionOptions,
  ) {}

  /** The session of partition `key`, opening it when there is none. */
  session(key: string): Promise<LegacyClient> {
    const known = this.sessions.get(key)
    if (known !== undefined) {
      // Most recently used last, so the first one is the one to close when there are too many.
      this.sessions.delete(key)
      this.sessions.set(key, known)
      return known
    }
    const opening = this.open(key)
    this.sessions.set(key, opening)
    opening.catch(() => {
      if (this.sessions.get(key) === opening) this.sessions.delete(key)
    })
    if (this.sessions.size > MAX_PARTITIONS) {
      const [oldest] = this.sessions.keys()
      if (oldest !== undefined) this.drop(oldest)
    }
    return opening
  }

  /** Forget partition `key`'s session (the server forgot it, or it failed); the next call opens a new one. */
  drop(key: string, client?: LegacyClient): void {
    const known = this.sessions.get(key)
    if (known === undefined) return
    void known.then(
      (open) => {
        if (client !== undefined && open !== client) return
        if (this.sessions.get(key) === known) this.sessions.delete(key)
        open.close().catch(() => {})
      },
      () => {},
    )
    if (client === undefined) this.sessions.delete(key)
  }

  async close(): Promise<void> {
    const all = [...this.sessions.values()]
    this.sessions.clear()
    await Promise.all(all.map((s) => s.then((client) => client.close()).catch(() => {})))
  }

  private async open(key: string): Promise<LegacyClient> {
    const [{ openLegacyClient }, { NodeHttpClientTransport }] = await Promise.all([
      import('./legacy-session.js'),
      import('./http-client-transport.js'),
    ])
    const transport = new NodeHttpClientTransport(new URL(this.url), {
      ...(this.headers !== undefined ? { headers: this.headers } : {}),
      headerProvider: (refused) => this.partition.headers(key, refused),
      maxMessageBytes: this.options.maxMessageBytes,
    })
    // What the server asks while serving a call (elicitation, sampling, roots) goes to whoever made
    // that call, as on the shared session: the calls offered are only this partition's.
    const { handlers, label, calls, onElicitationComplete } = this.options
    const client: LegacyClient = await openLegacyClient({
      handlers,
      label,
      calls: () => calls(client),
      ...(onElicitationComplete
        ? {
            notifications: {
              'notifications/elicitation/complete': (params) => onElicitationComplete(String(params.elicitationId)),
            },
          }
        : {}),
    })
    await client.connect(transport, { timeout: this.options.timeoutMs })
    return client
  }
}
