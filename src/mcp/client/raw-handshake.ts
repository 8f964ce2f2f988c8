// A session that takes over a stdio server whose `initialize` was already sent by someone else (the
// CLI's first script, which lists the tools before the SDK is loaded): the transport below answers
// the SDK Client's own `initialize` with the server's recorded answer and keeps its
// `notifications/initialized` (already sent too), so the server is initialized exactly once.
import type { JSONRPCMessage, McpTransport } from '../protocol/wire-types.js'
import type { RawHandshake } from './stdio-spawn.js'

/** `transport`, with the first `initialize` and `notifications/initialized` answered from `handshake`. */
export function adoptHandshake(transport: McpTransport, handshake: RawHandshake): McpTransport {
  let initialize = true
  const adopted: McpTransport = {
    start: () => transport.start(),
    close: () => transport.close(),
    send(message, options) {
      if (initialize && 'method' in message && message.method === 'initialize' && 'id' in message) {
        initialize = false
        const { id } = message
        void handshake.answer.then((answer) => {
          // No answer: the server closed before it answered, which the transport reports itself.
          if (answer !== undefined) adopted.onmessage?.({ ...answer, id } as JSONRPCMessage)
        })
        return Promise.resolve()
      }
      if (handshake.initialized && 'method' in message && message.method === 'notifications/initialized') {
        handshake.initialized = false
        return Promise.resolve()
      }
      return transport.send(message, options)
    },
  }
  transport.onmessage = (message, extra) => adopted.onmessage?.(message, extra)
  transport.onerror = (error) => adopted.onerror?.(error)
  transport.onclose = () => adopted.onclose?.()
  Object.defineProperty(adopted, 'setProtocolVersion', {
    value: (version: string) =>
      (transport as { setProtocolVersion?: (v: string) => void }).setProtocolVersion?.(version),
  })
  return adopted
}
