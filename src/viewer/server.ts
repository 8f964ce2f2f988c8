// The live viewer: an HTTP server on 127.0.0.1 that serves the page, its two assets and a stream
// of server-sent events for the one journal it was given. No route takes a path or a file name.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { basename } from 'node:path'
import { ConfigError } from '../errors/config-error.js'
import { JournalReadError, openJournalFile } from '../journal/open-journal.js'
import type { JournalRecord } from '../journal/records.js'
import type { Store } from '../journal/store.js'
import { loopbackAccessCheck } from '../util/http-origin.js'
import {
  isLoopbackHost,
  LOGIN_PAGE_CSP,
  loginPageHtml,
  sameToken,
  VIEWER_SESSION_COOKIE,
  type ViewerAccess,
  type ViewerIdentity,
  ViewerLogin,
} from './access.js'
import {
  MAX_VIEWER_REASON_CHARS,
  VIEWER_DECISION_KINDS,
  type ViewerApprovalHandler,
  type ViewerDecision,
  type ViewerDecisionKind,
  type ViewerPendingCall,
} from './approval-state.js'
import { loadViewerAssets, type ViewerAssets } from './assets.js'
import { cardJson } from './card-json.js'
import { handleCredentials, type ViewerCredentials } from './credentials.js'
import { JournalFollower, type LineAt } from './follow.js'
import { toLineRecord } from './journal-line.js'
import { JournalLineReader } from './line-reader.js'
import type { CardRowHeader, SessionCard, TurnView } from './model.js'
import { SERVED_PAGE_CSP, servedPageHtml } from './page.js'
import { presenterTable, type ToolPresenter } from './presenters.js'
import { SessionState } from './session.js'
import type { ViewerSessionOptions } from './static.js'
import { StoreFollower } from './store-source.js'

export type { ViewerAccess, ViewerIdentity, ViewerToken } from './access.js'
export type { ViewerApprovalHandler, ViewerDecision, ViewerDecisionKind, ViewerPendingCall } from './approval-state.js'
export { cardJson } from './card-json.js'
export type { ViewerCredentials } from './credentials.js'

/** The interface the viewer listens on unless told otherwise. */
export const VIEWER_HOST = '127.0.0.1'

export interface ViewerServerOptions extends ViewerSessionOptions {
  /** The journal to serve (JSON lines). It must exist. With `store`, only the page's title. */
  journal: string
  /** Serve the journal of this store instead of the file (followed live through the store). */
  store?: Store
  /** Port; default 0 (any free port). */
  port?: number
  /**
   * The address to listen on; default 127.0.0.1. Anything but a loopback address needs
   * `access.tokens` (token login), and is then served to any Host whose Origin, when sent, is its own.
   */
  host?: string
  /** Token login and who may decide approvals (see {@link ViewerAccess}). */
  access?: ViewerAccess
  /** Offer approve/deny buttons for pending approvals and apply decisions through this. */
  approval?: ViewerApprovalHandler
  /** Journal poll interval backing up the file watcher (ms). Default 250. */
  pollMs?: number
  /**
   * Let each signed-in person set or delete their own secret for the servers with `auth.perUser`
   * at `/credentials`; needs token login (`access.tokens`).
   */
  credentials?: ViewerCredentials
}

export interface ViewerServer {
  /** `http://HOST:PORT/` */
  readonly url: string
  readonly port: number
  /**
   * Settles once the journal as it was at start has been read. The viewer listens after the first
   * piece (a MiB of a file, a thousand records of a store) and serves while it reads the rest; a
   * page that connects meanwhile gets what was read so far, then the rest as it comes.
   */
  readonly ingested: Promise<void>
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
/** A large session goes out as a snapshot and then `cards` frames of about this size, so the page
 * parses and draws it in pieces instead of one task the size of the journal. */
const FRAME_BYTES = 256 * 1024
/** The first frame is smaller: the page draws it at once, before it knows how large the session is. */
const FIRST_FRAME_BYTES = 32 * 1024
/** A page further behind than this gets its new cards paced by its connection, as a snapshot is. */
const BACKLOG_BYTES = 4 * FRAME_BYTES

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body))
}

/**
 * The `cards` of a message as server-sent events of at most about {@link FRAME_BYTES}; `head` rides
 * on the first (`event`), the rest are `cards`. An event's data lines are the head's JSON, then per
 * card its row header (a JSON array, see `CardRowHeader`) and the card's JSON: the page splits the
 * lines and keeps each card as text until it is drawn.
 */
function cardFrames(event: string, head: Record<string, unknown>, cards: readonly CardLines[]): string {
  const frames: string[] = []
  let lines: string[] = []
  let size = 0
  const flush = () => {
    frames.push(frameOf(frames.length === 0 ? event : 'cards', frames.length === 0 ? head : {}, lines))
    lines = []
    size = 0
  }
  for (const card of cards) {
    if (size > 0 && size + card.size > (frames.length === 0 ? FIRST_FRAME_BYTES : FRAME_BYTES)) flush()
    lines.push(card.text)
    size += card.size
  }
  if (lines.length > 0 || frames.length === 0) flush()
  return frames.join('')
}

/** One event of card lines (see {@link cardFrames}). */
function frameOf(event: string, head: Record<string, unknown>, lines: readonly string[]): string {
  return `event: ${event}\ndata: ${JSON.stringify(head)}${lines.join('')}\n\n`
}

/** A card's two data lines, and the size of its JSON (what frames are cut by). */
interface CardLines {
  text: string
  size: number
}

function cardLines(card: SessionCard): CardLines {
  const json = cardJson(card)
  const header: CardRowHeader = [card.id, card.seq, card.parentId, card.agent, card.tool, card.status.kind]
  // Only journals that record identities have callers; the header stays six long without.
  if (card.caller !== null) header.push(card.caller)
  // JSON.stringify never emits a raw newline, so each line is one `data:` line.
  return { text: `\ndata: ${JSON.stringify(header)}\ndata: ${json}`, size: json.length }
}

/** Resolves when `res` can take more (or is gone). */
function drained(res: ServerResponse): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** The `turns` event: the head line, then one turn's JSON per data line (none when there are no turns). */
function turnFrame(turns: readonly TurnView[]): string {
  if (turns.length === 0) return ''
  return `event: turns\ndata: {}${turns.map((turn) => `\ndata: ${JSON.stringify(turn)}`).join('')}\n\n`
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

/** The page's decision, or what is wrong with it (said to the sender, never applied). */
function parseDecision(text: string): ViewerDecision | string {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return 'bad decision: not JSON'
  }
  if (typeof value !== 'object' || value === null) return 'bad decision: expected an object'
  const { callId, turnId, decision, reason } = value as {
    callId?: unknown
    turnId?: unknown
    decision?: unknown
    reason?: unknown
  }
  if (typeof callId !== 'string') return 'bad decision: callId: expected a string'
  if (typeof decision !== 'string' || !(VIEWER_DECISION_KINDS as readonly string[]).includes(decision))
    return `bad decision: decision: expected one of ${VIEWER_DECISION_KINDS.join(', ')}`
  if (turnId !== undefined && (typeof turnId !== 'string' || turnId === ''))
    return 'bad decision: turnId: expected a non-empty string'
  const kind = decision as ViewerDecisionKind
  const turn = turnId === undefined ? {} : { turnId }
  if (reason === undefined || reason === '') return { callId, ...turn, decision: kind }
  if (kind !== 'deny' && kind !== 'deny-always') return 'bad decision: reason: only a denial takes a reason'
  if (typeof reason !== 'string' || reason.length > MAX_VIEWER_REASON_CHARS)
    return `bad decision: reason: expected a string of at most ${MAX_VIEWER_REASON_CHARS} characters`
  return { callId, ...turn, decision: kind, reason }
}

/** Refuse a journal the viewer cannot follow (missing, not a regular file) before anything listens. */
async function checkJournal(journal: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof openJournalFile>>
  try {
    handle = await openJournalFile(journal)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new ConfigError('startViewer(options).journal', `not found: ${journal}`)
    throw error
  }
  await handle.close()
}

/** One open event stream. */
interface Client {
  /** The head it was given (its own CSRF token and approve flag). */
  head: { title: string; approve: boolean; token?: string }
  /** Cards with a lower `seq` have been sent; later ones are still to come from `catchUp`. */
  sent: number
  /** `catchUp` is sending it the cards from `sent` on, paced by its connection. */
  catchingUp: boolean
  /** Bumped to stop a running `catchUp` (the session started over). */
  generation: number
}

/**
 * The session of the followed journal and the pages listening to it: records fold into cards, and
 * changed cards go out to every open event stream. A file's records are not kept: each call keeps
 * where its lines are, and a card is built from them when it is sent (see `SessionState`).
 */
class LiveSession {
  session: SessionState
  readonly clients = new Map<ServerResponse, Client>()
  private reader: JournalLineReader | undefined
  private board: readonly ViewerPendingCall[] | undefined
  private readonly follower: JournalFollower | StoreFollower
  /** A read failure while starting, reported by `start`. */
  private startError: unknown
  private started = false

  constructor(
    private readonly options: ViewerServerOptions,
    private readonly presenters: ReadonlyMap<string, ToolPresenter>,
    private readonly title: string,
  ) {
    this.session = this.newSession()
    this.follower = options.store
      ? new StoreFollower(options.store, {
          onRecords: (records) => this.ingest(records),
          onError: (error) => process.emitWarning(`toolgate viewer: ${String(error)}`),
        })
      : new JournalFollower(options.journal, {
          pollMs: options.pollMs,
          maxLineBytes: options.maxLineBytes,
          onRecords: (records, places) => this.ingest(records, places),
          onReset: () => this.restart(),
          onError: (error) => this.failed(error),
        })
  }

  /** A session whose file-read records are read again from the file rather than kept. */
  private newSession(): SessionState {
    this.reader?.close()
    this.reader = this.options.store ? undefined : new JournalLineReader(this.options.journal)
    return new SessionState(this.presenters, this.reader?.read)
  }

  /**
   * Send a page the session from card `client.sent` on, a frame at a time, waiting for its
   * connection to take each and letting the event loop turn between them; then every turn. From
   * the start (`snapshot`), or to catch up a page that fell behind.
   */
  private async catchUp(res: ServerResponse, client: Client, snapshot: boolean, prefix = ''): Promise<void> {
    const generation = ++client.generation
    client.catchingUp = true
    if (snapshot) client.sent = 0
    let event = snapshot ? 'snapshot' : 'cards'
    do {
      const lines: string[] = []
      let size = 0
      const limit = event === 'snapshot' ? FIRST_FRAME_BYTES : FRAME_BYTES
      while (client.sent < this.session.size && (size === 0 || size < limit)) {
        const card = cardLines(this.session.cardAt(client.sent++))
        lines.push(card.text)
        size += card.size
      }
      const more = res.write(prefix + frameOf(event, event === 'snapshot' ? client.head : {}, lines))
      prefix = ''
      event = 'cards'
      await (more ? nextTurn() : drained(res))
      if (client.generation !== generation || !this.clients.has(res)) return
    } while (client.sent < this.session.size)
    client.catchingUp = false
    res.write(turnFrame(this.session.turnViews()))
  }

  private broadcastCards(ids: readonly string[]): void {
    if (ids.length === 0 || this.clients.size === 0) return
    const built = new Map<string, CardLines>()
    const linesOf = (id: string) => {
      let lines = built.get(id)
      if (lines === undefined) {
        lines = cardLines(this.session.card(id)!)
        built.set(id, lines)
      }
      return lines
    }
    for (const [res, client] of this.clients) {
      // A page far behind (a slow connection while a large journal is read) gets new cards from
      // `catchUp`, paced by its connection, instead of an ever-growing write buffer.
      const behind = !client.catchingUp && res.writableLength > BACKLOG_BYTES
      // A page catching up gets changes of the cards it has; the rest come in order.
      const mine =
        client.catchingUp || behind ? ids.filter((id) => (this.session.seqOf(id) ?? Infinity) < client.sent) : ids
      if (mine.length > 0) res.write(cardFrames('cards', {}, mine.map(linesOf)))
      if (behind) void this.catchUp(res, client, false)
      else if (!client.catchingUp) client.sent = this.session.size
    }
  }

  private ingest(records: readonly JournalRecord[], places?: readonly LineAt[]): void {
    // Open the file for reading lines again now, while the places point into it.
    this.reader?.open()
    const changed = new Set<string>()
    records.forEach((record, i) => {
      const line = toLineRecord(record, places?.[i])
      if (line !== undefined) for (const id of this.session.ingest(line)) changed.add(id)
    })
    this.broadcastCards([...changed])
    const turns = this.session.takeChangedTurns()
    if (turns.length === 0) return
    const frame = turnFrame(turns)
    for (const [res, client] of this.clients) if (!client.catchingUp) res.write(frame)
  }

  private restart(): void {
    this.session = this.newSession()
    this.session.setDecidable(this.board)
    for (const [res, client] of this.clients) void this.catchUp(res, client, true)
  }

  /** A journal the readers refuse stops the viewer at start, and is reported once while it runs; a
   * passing failure (the file replaced mid-read) is retried by the next poll. */
  private failed(error: unknown): void {
    if (!(error instanceof JournalReadError)) return
    if (!this.started) this.startError ??= error
    else process.emitWarning(`toolgate viewer: ${error.message}; the page shows what was read before it`)
  }

  /**
   * Which calls the state file lets the page decide; re-read when the file changes (the host
   * resumed the turn and wrote the next state, or another viewer recorded a decision).
   */
  async refreshBoard(): Promise<void> {
    if (this.options.approval === undefined) return
    this.board = await this.options.approval.pending()
    this.broadcastCards(this.session.setDecidable(this.board))
  }

  /**
   * Read the first piece of the journal (failing on a journal the readers refuse), then read the
   * rest and keep following in the background.
   */
  async start(): Promise<void> {
    await this.refreshBoard()
    await this.follower.start()
    this.started = true
    if (this.startError !== undefined) {
      this.follower.close()
      throw this.startError
    }
  }

  /** Settles once the journal as it was at start has been read. */
  whenIngested(): Promise<void> {
    return this.follower.whenCaughtUp()
  }

  /** Open an event stream: the snapshot now, then changes as they happen. */
  stream(res: ServerResponse, access: { approve: boolean; token?: string }): void {
    const client: Client = { head: { title: this.title, ...access }, sent: 0, catchingUp: true, generation: 0 }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    })
    this.clients.set(res, client)
    // The retry line goes with the first frame: a reader sees the snapshot begin in the first chunk.
    void this.catchUp(res, client, true, 'retry: 1000\n\n')
    const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS)
    res.on('close', () => {
      clearInterval(heartbeat)
      this.clients.delete(res)
    })
  }

  close(): void {
    this.follower.close()
    for (const res of this.clients.keys()) res.end()
    this.clients.clear()
    this.reader?.close()
  }
}

/** `POST /decision`: a decision from the page, checked against the token and the journal. */
async function handleDecision(
  req: IncomingMessage,
  res: ServerResponse,
  live: LiveSession,
  approval: ViewerApprovalHandler | undefined,
  token: string,
  who: { identity: ViewerIdentity | undefined; mayApprove: boolean },
): Promise<void> {
  if (approval === undefined) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n')
  if (!sameToken(req.headers['x-toolgate-token'], token))
    return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: missing or wrong CSRF token\n')
  if (!who.mayApprove)
    return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: you are not among the approvers\n')
  const body = await readBody(req)
  const decision = body === undefined ? 'bad decision: too large' : parseDecision(body)
  if (typeof decision === 'string') return send(res, 400, 'text/plain; charset=utf-8', `${decision}\n`)
  // The journal must show the call waiting in the turn named (the handler lists which turn that is).
  if (live.session.pendingCards(decision.callId, decision.turnId).length === 0) {
    return sendJson(res, 409, {
      ok: false,
      reason: `call ${decision.callId} is not awaiting approval in the journal${
        decision.turnId === undefined ? '' : ` in turn ${decision.turnId}`
      }`,
    })
  }
  const outcome = await approval.decide(
    who.identity === undefined ? decision : { ...decision, decidedBy: who.identity.subject },
  )
  await live.refreshBoard()
  if (!outcome.applied) return sendJson(res, 409, { ok: false, reason: outcome.reason })
  if (outcome.note !== undefined) process.emitWarning(`toolgate viewer: ${outcome.note}`)
  return sendJson(res, 200, outcome.note === undefined ? { ok: true } : { ok: true, note: outcome.note })
}

/** The read-only routes: the page, its two assets and the event stream; nothing else exists. */
async function serveRead(
  path: string,
  res: ServerResponse,
  title: string,
  assets: ViewerAssets,
  live: LiveSession,
  access: { approve: boolean; token?: string },
): Promise<void> {
  switch (path) {
    case '/':
      return send(res, 200, 'text/html; charset=utf-8', servedPageHtml(title))
    case '/viewer.js':
      return send(res, 200, 'text/javascript; charset=utf-8', assets.js)
    case '/viewer.css':
      return send(res, 200, 'text/css; charset=utf-8', assets.css)
    case '/events':
      return live.stream(res, access)
    default:
      return send(res, 404, 'text/plain; charset=utf-8', 'not found\n')
  }
}

/** Poll the approval state file while the viewer runs; `undefined` when it does not approve. */
function watchBoard(live: LiveSession, options: ViewerServerOptions): NodeJS.Timeout | undefined {
  if (options.approval === undefined) return undefined
  const timer = setInterval(() => {
    live.refreshBoard().catch((error: unknown) => process.emitWarning(`toolgate viewer: ${String(error)}`))
  }, options.pollMs ?? 250)
  timer.unref()
  return timer
}

/** Listen on `host`; answers the bound port. */
async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return (server.address() as AddressInfo).port
}

/** Serve the viewer for one journal (on 127.0.0.1 unless `options.host` says otherwise). */
export async function startViewer(options: ViewerServerOptions): Promise<ViewerServer> {
  const journal = options.journal
  const host = options.host ?? VIEWER_HOST
  if (typeof host !== 'string' || host === '')
    throw new ConfigError('startViewer(options).host', 'expected a non-empty address')
  const login = new ViewerLogin(options.access)
  const loopback = isLoopbackHost(host)
  if (!loopback && !login.enabled)
    throw new ConfigError(
      'startViewer(options).access.tokens',
      `listening on ${host} (not a loopback address) needs token login: give at least one token`,
    )
  const approve = options.approval !== undefined
  if (approve && login.enabled && !options.access?.approvers)
    throw new ConfigError(
      'startViewer(options).access.approvers',
      'with token login, deciding approvals needs the approvers (subjects or groups) named',
    )
  if (options.credentials !== undefined && !login.enabled)
    throw new ConfigError(
      'startViewer(options).credentials',
      "a person's own credentials need token login (access.tokens): the viewer must know who is signed in",
    )
  if (options.store === undefined) await checkJournal(journal)
  const assets: ViewerAssets = await loadViewerAssets()
  const title = options.title ?? basename(journal)
  // Without login, a per-run secret the page learns from the event stream (same-origin only) and
  // echoes in a custom header: another site can neither read it nor send that header without a
  // preflight. With login, each session has its own.
  const token = randomBytes(24).toString('base64url')
  const live = new LiveSession(options, presenterTable(options.presenters), title)
  let port = 0

  // DNS rebinding and cross-site requests: on loopback only loopback names and origins with our
  // port are served; elsewhere login stands against rebinding, and an Origin must be the Host's own.
  let refusal: ReturnType<typeof loopbackAccessCheck> = () => ({ header: 'host', message: 'not listening yet' })

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refused = refusal(req.headers)
    if (refused !== undefined)
      return send(res, refused.header === 'host' ? 421 : 403, 'text/plain; charset=utf-8', `${refused.message}\n`)
    const path = (req.url ?? '/').split('?')[0]
    if (path === '/login' && login.enabled) return handleLogin(req, res, login, title)
    const session = login.enabled ? login.sessionOf(req.headers) : undefined
    if (login.enabled && session === undefined) {
      if (req.method === 'GET' && path === '/') {
        res.writeHead(303, { ...SECURITY_HEADERS, location: '/login' })
        return void res.end()
      }
      return send(res, 401, 'text/plain; charset=utf-8', 'sign in first: /login\n')
    }
    if (path === '/credentials' && options.credentials !== undefined && session !== undefined)
      return handleCredentials(req, res, options.credentials, session, SECURITY_HEADERS)
    const identity = session?.identity
    const mayApprove = approve && login.mayApprove(identity)
    const csrf = session?.csrf ?? token
    if (req.method === 'POST' && path === '/decision')
      return handleDecision(req, res, live, options.approval, csrf, { identity, mayApprove })
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD')
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n')
    }
    // A signed-in page always gets its session's CSRF token; buttons only when it may decide.
    const access = mayApprove || session !== undefined ? { approve: mayApprove, token: csrf } : { approve: false }
    return serveRead(path, res, title, assets, live, access)
  }

  await live.start()
  const boardTimer = watchBoard(live, options)
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n')
      else res.end()
      process.emitWarning(`toolgate viewer: ${error instanceof Error ? error.message : String(error)}`)
    })
  })
  port = await listen(server, options.port ?? 0, host).catch((error: unknown) => {
    live.close()
    if (boardTimer !== undefined) clearInterval(boardTimer)
    throw error
  })
  refusal = loopback ? loopbackAccessCheck(port) : sameOriginCheck

  const ingested = live.whenIngested()
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    ingested,
    async close() {
      live.close()
      if (boardTimer !== undefined) clearInterval(boardTimer)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** Off loopback: any Host, but an Origin (sent by browsers on cross-site requests) must be the Host's own. */
function sameOriginCheck(headers: IncomingMessage['headers']): ReturnType<ReturnType<typeof loopbackAccessCheck>> {
  const host = headers.host
  if (host === undefined || host === '') return { header: 'host', message: 'Host (missing) is not accepted' }
  const origin = headers.origin
  if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`)
    return { header: 'origin', message: `Origin ${JSON.stringify(origin)} is not this site's` }
  return undefined
}

/** `GET /login` shows the form; `POST /login` checks the token and opens a session. */
async function handleLogin(
  req: IncomingMessage,
  res: ServerResponse,
  login: ViewerLogin,
  title: string,
): Promise<void> {
  const page = (status: number, problem?: string) => {
    const body = loginPageHtml(title, problem)
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      'content-security-policy': LOGIN_PAGE_CSP,
      // With no-referrer, a browser posts the form with `Origin: null`, which the origin check refuses.
      'referrer-policy': 'same-origin',
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    })
    res.end(body)
  }
  if (req.method === 'GET' || req.method === 'HEAD') return page(200)
  if (req.method !== 'POST') {
    res.setHeader('allow', 'GET, HEAD, POST')
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n')
  }
  const body = await readBody(req)
  const token = body === undefined ? null : new URLSearchParams(body).get('token')
  const session = token === null || token === '' ? undefined : login.login(token)
  if (session === undefined) return page(401, 'That token is not valid.')
  res.writeHead(303, {
    ...SECURITY_HEADERS,
    location: '/',
    'set-cookie': `${VIEWER_SESSION_COOKIE}=${session.id}; HttpOnly; SameSite=Strict; Path=/`,
  })
  res.end()
}
