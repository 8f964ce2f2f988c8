// How long `serve --http` keeps an idle keep-alive connection, and how long it tells clients they
// may keep one. A connection closed by the server races the client's next request on it: the client
// may already have written that request (it then sees "other side closed", or a reset when the
// request sat unread in the socket). Only the client knows when it is about to send, so the client
// must be the one to close idle connections: the server holds them far longer than it advertises.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'

/**
 * How long the server keeps an idle connection (ms). Node's default, 5 s, is within a second or two of
 * what clients keep (fetch's undici 4 s, Node's agent and Python's httpx 5 s), a margin a loaded
 * machine's scheduling eats; above 60 s, the idle timeout of common load balancers and proxies.
 */
export const IDLE_CONNECTION_MS = 65_000

/** What every keep-alive response advertises (`Keep-Alive: timeout=`, s): far below {@link IDLE_CONNECTION_MS}. */
export const ADVERTISED_IDLE_SECONDS = 5

/** Hold idle connections for {@link IDLE_CONNECTION_MS}. */
export function holdIdleConnections(server: Server): void {
  server.keepAliveTimeout = IDLE_CONNECTION_MS
}

/**
 * Tell the client to keep this connection idle no longer than {@link ADVERTISED_IDLE_SECONDS}: a
 * client that honours the hint (undici keeps the hint less 2 s) then never reuses a connection the
 * server is closing. Node would otherwise advertise its own keep-alive timeout, letting clients come
 * within that same margin of it. A response that closes its connection is left as Node made it.
 */
export function advertiseKeepAlive(res: ServerResponse<IncomingMessage>): void {
  if (!res.shouldKeepAlive) return
  // Set together: Node adds its own Keep-Alive only while no Connection header is set.
  res.setHeader('connection', 'keep-alive')
  res.setHeader('keep-alive', `timeout=${ADVERTISED_IDLE_SECONDS}`)
}
