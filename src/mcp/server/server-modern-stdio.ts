// The served scope over MCP 2026-07-28 on stdio: the connection's first message claimed that era,
// so the SDK v2's stdio entry pins one low-level server (the same handlers as the HTTP leg, see
// server-modern.ts) for the connection and answers what the era defines for itself: the `_meta`
// envelope, server/discover, removed methods, cache hints and subscriptions/listen.
// Nothing of the SDK v2 appears in what this module exports (see server-modern.ts).
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import type { Context } from 'cordis'
import { type ModernHttpOptions, type ModernServer, modernServers } from './server-modern.js'

/** Options of {@link serveModernStdio}: those of the HTTP leg, less its body limit (the transport has its own). */
export type ModernStdioOptions = Omit<ModernHttpOptions, 'maxMessageBytes'>

/** A stdio transport as the SDK's entry drives it (the gateway's startup gate, replaying what it held). */
export interface StdioWire {
  onmessage?: ((message: never, extra?: never) => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onclose?: (() => void) | undefined
  start(): Promise<void>
  send(message: never, options?: never): Promise<void>
  close(): Promise<void>
}

/** A 2026-07-28 stdio connection being served. */
export interface ModernStdioConnection {
  /** Resolves when the connection ends (the client closed stdin, the transport failed, or close()). */
  readonly done: Promise<void>
  close(): Promise<void>
}

/**
 * Serves one 2026-07-28 connection on `wire` until it ends. Changes to the tools (and the catalog)
 * reach the client's open subscriptions/listen streams, which the SDK's entry keeps.
 */
export function serveModernStdio(ctx: Context, options: ModernStdioOptions, wire: StdioWire): ModernStdioConnection {
  const servers = modernServers(ctx, options, 'serveModernStdio')
  let pinned: ModernServer | undefined
  let ended!: () => void
  const done = new Promise<void>((resolve) => {
    ended = resolve
  })
  // The entry takes the wire's events; its close is also the connection's end.
  const watched: StdioWire = {
    start: () => {
      wire.onmessage = (message, extra) => watched.onmessage?.(message, extra)
      wire.onerror = (error) => watched.onerror?.(error)
      wire.onclose = () => {
        watched.onclose?.()
        finish()
      }
      return wire.start()
    },
    send: (message, sendOptions) => wire.send(message, sendOptions),
    close: () => wire.close(),
  }
  // A burst of changes is one notification per kind.
  const pending = new Set<'tools' | 'resources' | 'prompts'>()
  const changed = (kind: 'tools' | 'resources' | 'prompts') => {
    if (pinned === undefined || pending.has(kind)) return
    pending.add(kind)
    queueMicrotask(() => {
      pending.delete(kind)
      const server = pinned
      if (server === undefined) return
      const sent =
        kind === 'tools'
          ? server.sendToolListChanged()
          : kind === 'resources'
            ? server.sendResourceListChanged()
            : server.sendPromptListChanged()
      sent.catch((error: Error) => options.onerror?.(error))
    })
  }
  const stopTools = ctx.on('tools/change', () => changed('tools'))
  const stopCatalog = options.catalog?.watch?.((kind) => changed(kind)) ?? (() => {})
  let finished = false
  const finish = () => {
    if (finished) return
    finished = true
    pinned = undefined
    stopTools()
    if (typeof stopCatalog === 'function') stopCatalog()
    servers.close()
    ended()
  }
  const handle = serveStdio(
    () => {
      const server = servers.build(undefined)
      pinned = server
      return server as never
    },
    {
      legacy: 'reject',
      transport: watched as never,
      ...(options.onerror ? { onerror: options.onerror } : {}),
    },
  )
  return {
    done,
    async close() {
      await handle.close()
      finish()
    },
  }
}
