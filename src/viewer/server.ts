// The live viewer: an HTTP server on 127.0.0.1 that serves the page, its two assets and a stream
// of server-sent events for the one journal it was given. No route takes a path or a file name.
import { randomBytes } from 'node:crypto'
import { access } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { basename } from 'node:path'
import { ConfigError } from '../errors/config-error.js'
import { loopbackAccessCheck } from '../util/http-origin.js'
import type { ViewerApprovalHandler, ViewerDecision } from './approval-state.js'
import { loadViewerAssets, type ViewerAssets } from './assets.js'
import { JournalFollower } from './follow.js'
import { toLineRecord } from './journal-line.js'
import type { SessionSnapshot } from './model.js'
import { SERVED_PAGE_CSP, servedPageHtml } from './page.js'
import { presenterTable } from './presenters.js'
import { SessionState } from './session.js'
import type { ViewerSessionOptions } from './static.js'

export type { ViewerApprovalHandler, ViewerDecision } from './approval-state.js'

/** The only interface the viewer listens on. */
export const VIEWER_HOST = '127.0.0.1'

export interface ViewerServerOptions extends ViewerSessionOptions {
  /** The journal to serve (JSON lines). It must exist. */
  journal: string
  /** Port on 127.0.0.1; default 0 (any free port). */
  port?: number
  /** Offer approve/deny buttons for pending approvals and apply decisions through this. */
  approval?: ViewerApprovalHandler
  /** Journal poll interval backing up the file watcher (ms). Default 250. */
  pollMs?: number
}

export interface ViewerServer {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string
  readonly port: number
  close(): Promise<void>
}

const SECURITY_HEADERS = {
  'content-security-policy': SERVED_PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
} as const

const MAX_DECISION_BYTES = 4096
const HEARTBEAT_MS = 15_000

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body))
}

function sseFrame(event: string, data: unknown): string {
  // JSON.stringify never emits a raw newline, so one `data:` line carries the whole message.
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  let size = 0
  const chunks: Buffer[] = []
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_DECISION_BYTES) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function parseDecision(text: string): ViewerDecision | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const { callId, decision } = value as { callId?: unknown; decision?: unknown }
  if (typeof callId !== 'string' || (decision !== 'approve' && decision !== 'deny')) return undefined
  return { callId, decision }
}

/** Serve the viewer for one journal on 127.0.0.1. */
export async function startViewer(options: ViewerServerOptions): Promise<ViewerServer> {
  const journal = options.journal
  try {
    await access(journal)
  } catch {
    throw new ConfigError('startViewer(options).journal', `not found: ${journal}`)
  }
  const assets: ViewerAssets = await loadViewerAssets()
  const presenters = presenterTable(options.presenters)
  const title = options.title ?? basename(journal)
  const approve = options.approval !== undefined
  // A per-run secret the page learns from the event stream (same-origin only) and echoes in a
  // custom header: another site can neither read it nor send that header without a preflight.
  const token = randomBytes(24).toString('base64url')
  let session = new SessionState(presenters)
  const clients = new Set<ServerResponse>()
  let port = 0
  let board: ReadonlyMap<string, string | null> | undefined

  const snapshot = (): SessionSnapshot & { token?: string } => {
    const snap: SessionSnapshot & { token?: string } = { title, cards: session.cards(), approve }
    if (approve) snap.token = token
    return snap
  }
  const broadcast = (frame: string): void => {
    for (const res of clients) res.write(frame)
  }

  const follower = new JournalFollower(journal, {
    pollMs: options.pollMs,
    onRecords(records) {
      const changed = new Set<string>()
      for (const record of records) {
        const line = toLineRecord(record)
        if (line !== undefined) for (const id of session.ingest(line)) changed.add(id)
      }
      if (changed.size === 0 || clients.size === 0) return
      const cards = [...changed].map((id) => session.card(id)!)
      broadcast(sseFrame('cards', { cards }))
    },
    onReset() {
      session = new SessionState(presenters)
      session.setDecidable(board)
      if (clients.size > 0) broadcast(sseFrame('snapshot', snapshot()))
    },
  })

  // Which calls the state file lets the page decide; re-read when the file changes (the host
  // resumed the turn and wrote the next state, or another viewer recorded a decision).
  const refreshBoard = async (): Promise<void> => {
    if (options.approval === undefined) return
    board = await options.approval.pending()
    const changed = session.setDecidable(board)
    if (changed.length > 0 && clients.size > 0) {
      broadcast(sseFrame('cards', { cards: changed.map((id) => session.card(id)!) }))
    }
  }
  let boardTimer: NodeJS.Timeout | undefined

  // DNS rebinding and cross-site requests: only loopback names and origins with our port are served.
  let refusal: ReturnType<typeof loopbackAccessCheck> = () => ({ header: 'host', message: 'not listening yet' })

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refused = refusal(req.headers)
    if (refused !== undefined)
      return send(res, refused.header === 'host' ? 421 : 403, 'text/plain; charset=utf-8', `${refused.message}\n`)
    const path = (req.url ?? '/').split('?')[0]
    if (req.method === 'POST' && path === '/decision') {
      if (options.approval === undefined) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n')
      if (req.headers['x-toolgate-token'] !== token) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden\n')
      const body = await readBody(req)
      const decision = body === undefined ? undefined : parseDecision(body)
      if (decision === undefined) return send(res, 400, 'text/plain; charset=utf-8', 'bad decision\n')
      const card = session.card(decision.callId)
      if (card?.pendingApproval === null || card?.pendingApproval === undefined) {
        return sendJson(res, 409, {
          ok: false,
          reason: `call ${decision.callId} is not awaiting approval in the journal`,
        })
      }
      const outcome = await options.approval.decide(decision)
      await refreshBoard()
      if (!outcome.applied) return sendJson(res, 409, { ok: false, reason: outcome.reason })
      return sendJson(res, 200, { ok: true })
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD')
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n')
    }
    switch (path) {
      case '/':
        return send(res, 200, 'text/html; charset=utf-8', servedPageHtml(title))
      case '/viewer.js':
        return send(res, 200, 'text/javascript; charset=utf-8', assets.js)
      case '/viewer.css':
        return send(res, 200, 'text/css; charset=utf-8', assets.css)
      case '/events': {
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          'content-type': 'text/event-stream; charset=utf-8',
          connection: 'keep-alive',
        })
        res.write(`retry: 1000\n\n${sseFrame('snapshot', snapshot())}`)
        clients.add(res)
        const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS)
        res.on('close', () => {
          clearInterval(heartbeat)
          clients.delete(res)
        })
        return
      }
      default:
        return send(res, 404, 'text/plain; charset=utf-8', 'not found\n')
    }
  }

  await refreshBoard()
  await follower.start()
  if (options.approval !== undefined) {
    boardTimer = setInterval(() => {
      refreshBoard().catch((error: unknown) => process.emitWarning(`toolgate viewer: ${String(error)}`))
    }, options.pollMs ?? 250)
    boardTimer.unref()
  }
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n')
      else res.end()
      process.emitWarning(`toolgate viewer: ${error instanceof Error ? error.message : String(error)}`)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, VIEWER_HOST, () => {
      server.off('error', reject)
      resolve()
    })
  })
  port = (server.address() as AddressInfo).port
  refusal = loopbackAccessCheck(port)

  return {
    url: `http://${VIEWER_HOST}:${port}/`,
    port,
    async close() {
      follower.close()
      if (boardTimer !== undefined) clearInterval(boardTimer)
      for (const res of clients) res.end()
      clients.clear()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
