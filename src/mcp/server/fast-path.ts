// A shortcut past the SDK's request handling for the messages a served MCP session sees most
// (`tools/call`). The SDK's Protocol costs an abort controller, a timer, closures and zod parsing
// per request; a gateway pays that on every relayed call. A server made by createMcpServer
// registers a FastPath here, and the transports toolgate serves with offer each incoming message
// to it before handing it to the SDK. Anything the fast path does not take goes the SDK's way, so
// the SDK stays the reference for every message and error it answers.

import type { AuthInfo, JSONRPCMessage } from '../protocol/wire-types.js'

/** What a transport knows about an incoming message beyond its JSON. */
export interface FastPathExtra {
  /** The request's authentication, as the SDK's `extra.authInfo` would carry it. */
  readonly authInfo?: AuthInfo
}

/** A server's shortcut for some incoming messages. */
export interface FastPath {
  /**
   * Take `message` or leave it: `false` means the transport hands it to the SDK as usual. When it
   * returns `true` the fast path owns the message: a request is answered by one call of `reply`
   * with its response (sent as the SDK would send a response to that request id), a notification
   * needs no reply. `reply` is never called for a message the fast path left.
   */
  take(message: JSONRPCMessage, extra: FastPathExtra, reply: (response: JSONRPCMessage) => Promise<void>): boolean
}

const registered = new WeakMap<object, FastPath>()

/** Register `server`'s fast path (createMcpServer does, for the servers it makes). */
export function setFastPath(server: object, fastPath: FastPath): void {
  registered.set(server, fastPath)
}

/** The fast path registered for `server`, if any: a transport serving it offers each incoming message. */
export function fastPathOf(server: object): FastPath | undefined {
  return registered.get(server)
}
