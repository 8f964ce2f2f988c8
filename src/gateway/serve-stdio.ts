// `toolgate serve` over stdio: one client on stdin/stdout, read through the startup gate while the
// upstreams start, served until it closes stdin or a signal asks to stop. Its first message chooses
// the era: a 2026-07-28 connection is served by the SDK v2's stdio entry (server-modern-stdio.ts),
// loaded only then; a 2025 one by the session server as before.
import type { Context } from 'cordis'
import {
  type LineStdioServerTransport,
  loadFastPath,
  loadModernStdio,
  loadStdioServerTransport,
  type McpServerHandle,
  type ModernStdioOptions,
} from '../mcp/gateway.js'
import { DEFAULT_DRAIN_TIMEOUT_SECONDS } from './drain-timeout.js'
import type { GatewayStartup } from './gateway.js'
import type { Log } from './log.js'
import { takeRawFirst } from './raw-first-record.js'
import type { GatewaySettings } from './settings.js'
import type { StartupGate } from './startup-gate.js'

/** The stdio transport, read from now on through the startup gate (see startup-gate.ts). */
export async function openStdio(
  settings: GatewaySettings,
  log: Log,
  serverInfo: { readonly name: string; readonly version: string },
): Promise<StdioStart> {
  const [{ LineStdioServerTransport }, { StartupGate, declareWhenKnown }] = await Promise.all([
    loadStdioServerTransport(),
    import('./startup-gate.js'),
  ])
  // What the CLI's first listing read and answered, when it ran (see raw-first.ts).
  const handed = takeRawFirst()
  const transport = new LineStdioServerTransport({
    ...(handed.stdin === undefined ? {} : { stdin: handed.stdin }),
    maxMessageBytes: settings.maxMessageBytes,
    limitName: '--max-message-bytes',
    // Stdin's end is the client's drain: what it sent is answered, within --drain-timeout.
    endGraceMs: (settings.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT_SECONDS) * 1000,
  })
  // Its requests are served once the gateway is open (serve-gateway.ts): --drain-timeout counts from then.
  transport.holdEndGrace()
  // What the transport refused (an oversized or malformed message) is answered to the client; the log says so too.
  const gate = new StartupGate(
    transport,
    {
      serverInfo,
      ...(handed.answered === undefined ? {} : { answered: handed.answered }),
      answeredElsewhere: (id) => transport.answeredElsewhere(id),
    },
    (error) => log.info(error.message),
  )
  const startup = declareWhenKnown(gate, Object.keys(settings.servers))
  await gate.open()
  return { transport, gate, startup }
}

export interface StdioStart {
  readonly transport: LineStdioServerTransport
  readonly gate: StartupGate
  readonly startup: GatewayStartup
}

/** How a 2026-07-28 connection is served: the gateway's context and the options of its 2026 face. */
export interface ModernStdio {
  readonly ctx: Context
  /** The options, made once the client chose the era, and how to end what they hold once it is served. */
  readonly open: () => Promise<{ readonly options: ModernStdioOptions; close(): void }>
}

/**
 * Until the client closes stdin (or a signal asks to stop). Any other end of the transport (a
 * failed read or write) is an error, so the process exits non-zero with the reason.
 */
export async function serveStdio(
  make: () => McpServerHandle,
  { transport, gate }: StdioStart,
  log: Log,
  modern?: ModernStdio,
): Promise<void> {
  // Until the client's first message chose the era, a signal ends the wait.
  const quit = () => void gate.close()
  process.once('SIGINT', quit)
  process.once('SIGTERM', quit)
  const era = await gate.era()
  process.off('SIGINT', quit)
  process.off('SIGTERM', quit)
  // A client that left while the upstreams started is not served.
  const served = era !== undefined && !gate.clientGone
  if (served && era === 'modern' && modern !== undefined) await serveModern(modern, gate, log)
  else if (served) await serveLegacy(make, transport, gate, log)
  if (transport.endReason !== undefined) throw new Error(`the stdio transport ended: ${transport.endReason.message}`)
}

async function serveModern(modern: ModernStdio, gate: StartupGate, log: Log): Promise<void> {
  const [{ serveModernStdio }, { options, close }] = await Promise.all([loadModernStdio(), modern.open()])
  try {
    const connection = serveModernStdio(modern.ctx, options, gate as never)
    const stop = () => void connection.close()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    log.debug('serving MCP 2026-07-28 over stdio')
    await connection.done
  } finally {
    close()
  }
}

async function serveLegacy(
  make: () => McpServerHandle,
  transport: LineStdioServerTransport,
  gate: StartupGate,
  log: Log,
): Promise<void> {
  const { fastPathOf } = await loadFastPath()
  const server = make()
  const done = new Promise<void>((resolve) => {
    const onclose = server.onclose
    server.onclose = () => {
      onclose?.()
      resolve()
    }
  })
  server.onerror = (error) => log.info(error.message)
  await server.connect(gate)
  transport.fastPath = fastPathOf(server)
  const stop = () => void server.close()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  log.debug('serving MCP over stdio')
  await done
}
