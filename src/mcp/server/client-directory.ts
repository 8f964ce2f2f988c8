// Which MCP client session made which call: createMcpServer records every session it serves and
// every call it runs, so code running inside a call (an upstream tool of a gateway) can reach the
// client that made it, with that client's capabilities, on that call's stream.
import type {
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  ListRootsRequest,
  ListRootsResult,
  RequestId,
} from '../protocol/wire-types.js'

/** How a request to a session's client is sent: bounded, cancellable, and tied to a request or a task. */
export interface McpClientRequestOptions {
  readonly signal?: AbortSignal
  /** Milliseconds before the request fails with a timeout. */
  readonly timeout?: number
  /** The incoming request this one serves (Streamable HTTP delivers it on that request's stream). */
  readonly relatedRequestId?: RequestId
  /** The task this one serves: delivered through the task's `tasks/result`, the task `input_required` meanwhile. */
  readonly relatedTask?: { readonly taskId: string }
}

/**
 * One client session of a served scope, as code running inside a call reaches it: what the client
 * declared, and the requests and notifications a server may send it.
 */
export interface McpClientSession {
  /** What the client declared when it initialized (undefined before that). */
  getClientCapabilities(): ClientCapabilities | undefined
  /** `elicitation/create` sent as given (the client checks it; no capability check here beyond its own). */
  elicit(
    params: ElicitRequestFormParams | ElicitRequestURLParams,
    options?: McpClientRequestOptions,
  ): Promise<ElicitResult>
  /** `elicitation/create`, refused before sending when the client did not declare that mode. */
  elicitInput(
    params: ElicitRequestFormParams | ElicitRequestURLParams,
    options?: McpClientRequestOptions,
  ): Promise<ElicitResult>
  createMessage(
    params: CreateMessageRequestParams,
    options?: McpClientRequestOptions,
  ): Promise<CreateMessageResult | CreateMessageResultWithTools>
  listRoots(params?: ListRootsRequest['params'], options?: McpClientRequestOptions): Promise<ListRootsResult>
  notification(
    notification: { method: string; params?: Record<string, unknown> },
    options?: { relatedRequestId?: RequestId },
  ): Promise<void>
  /** A function that tells the client a URL elicitation is complete. */
  createElicitationCompletionNotifier(elicitationId: string, options?: McpClientRequestOptions): () => Promise<void>
}

/** How to reach the client of one call in progress. */
export interface McpCallChannel {
  /** The session's client (one per client session). */
  readonly server: McpClientSession
  /** Aborted when the client cancels the call, or the call ends. */
  readonly signal: AbortSignal
  /**
   * Send a request to the client related to this call: the given options tie it to the call's
   * request (so Streamable HTTP delivers it on that request's stream) or, for a call running as a
   * task, to the task (delivered through `tasks/result`, the task marked `input_required` meanwhile).
   */
  send<T>(request: (options: McpClientRequestOptions) => Promise<T>): Promise<T>
  /**
   * Give this call's client `text` wherever the call's result says `placeholder`: the result the
   * pipeline records (the journal, the viewer) keeps the placeholder, only the answer to this
   * client carries the text. For what nobody else may see, such as a one-time sign-in link.
   */
  reveal?(placeholder: string, text: string): void
}

/** Every open session served with this directory, and the calls each is running. */
export class McpClientDirectory {
  private readonly open = new Set<McpClientSession>()
  private readonly calls = new Map<string, McpCallChannel>()
  private readonly rootsListeners = new Set<(server: McpClientSession) => void>()

  /** The sessions open now (initialized or not). */
  sessions(): readonly McpClientSession[] {
    return [...this.open]
  }

  /** The client of the call tree `rootCallId` (a call and its Code Mode sub-calls), while it runs. */
  callOf(rootCallId: string): McpCallChannel | undefined {
    return this.calls.get(rootCallId)
  }

  /** What the session's client declared when it initialized (undefined before that). */
  capabilitiesOf(server: McpClientSession): ClientCapabilities | undefined {
    return server.getClientCapabilities()
  }

  /** Called with the session whenever its client says its roots changed; returns how to stop. */
  onRootsChanged(listener: (server: McpClientSession) => void): () => void {
    this.rootsListeners.add(listener)
    return () => this.rootsListeners.delete(listener)
  }

  /** @internal createMcpServer: a session opened; the returned function closes it. */
  addSession(server: McpClientSession): () => void {
    this.open.add(server)
    return () => {
      this.open.delete(server)
      for (const [id, call] of this.calls) if (call.server === server) this.calls.delete(id)
    }
  }

  /** @internal createMcpServer: a call started; the returned function ends it. */
  addCall(rootCallId: string, channel: McpCallChannel): () => void {
    this.calls.set(rootCallId, channel)
    return () => {
      if (this.calls.get(rootCallId) === channel) this.calls.delete(rootCallId)
    }
  }

  /** @internal createMcpServer: the session's client sent `notifications/roots/list_changed`. */
  rootsChanged(server: McpClientSession): void {
    for (const listener of this.rootsListeners) {
      try {
        listener(server)
      } catch {
        // A listener's failure is its own; the other listeners still hear the change.
      }
    }
  }
}
