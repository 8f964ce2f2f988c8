/// <reference lib="esnext.disposable" preserve="true" />
// startFakeProvider: a local HTTP server that answers one provider API from a script of turns.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ConfigError } from '../errors/config-error.js'
import { PROVIDER_FORMATS, type ProviderFormat } from '../providers/index.js'
import { searchOfTurn } from './native-search.js'
import { checkTurns, type ScriptedTurn, turnAt } from './script.js'
import { WIRE } from './wire.js'

export interface FakeProviderOptions {
  /** The API to speak, named as in `toProviderTools`. */
  readonly format: ProviderFormat
  /** What the model says: request n (from 0) gets turn n. A request past the end gets an HTTP 500. */
  readonly turns: readonly ScriptedTurn[]
}

/** One request the fake received, in order. */
export interface FakeProviderRequest {
  readonly method: string
  /** The path and query, e.g. `/v1/chat/completions` or `/v1beta/models/gemini-2.5-flash:generateContent`. */
  readonly path: string
  /** The request headers, names in lower case (Node's `IncomingHttpHeaders`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** The JSON body as sent (text when it is not JSON). */
  readonly body: unknown
  /** Whether the client asked for a stream. */
  readonly stream: boolean
}

export interface FakeProvider {
  /**
   * `http://127.0.0.1:PORT`: the client's base URL (`baseURL` for `openai` and `@anthropic-ai/sdk`,
   * `httpOptions.baseUrl` for `@google/genai`). Any path prefix is accepted.
   */
  readonly url: string
  /** Every request received, in order (a test asserts what the client sent). */
  readonly requests: readonly FakeProviderRequest[]
  /** Stop listening and drop open connections (a hanging stream included). Idempotent. */
  close(): Promise<void>
  /** `await using fake = await startFakeProvider(…)` closes it at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
}

const ROUTES: { readonly [F in ProviderFormat]: RegExp } = {
  'openai-chat': /\/chat\/completions$/,
  'openai-responses': /\/responses$/,
  anthropic: /\/messages$/,
  gemini: /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/,
}

/**
 * Start a fake of a provider API on 127.0.0.1 (a free port). Each request gets the next turn of
 * the script, whole or, when the client asks for a stream, as server-sent events in the
 * provider's own wire format, so the official SDK client can be tested against it offline.
 */
export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('startFakeProvider(options)', 'expected an object')
  const { format } = options
  if (!PROVIDER_FORMATS.includes(format))
    throw new ConfigError(
      'startFakeProvider(options).format',
      `expected one of ${PROVIDER_FORMATS.map((f) => `'${f}'`).join(', ')}; got ${JSON.stringify(format)}`,
    )
  const turns = [...checkTurns(options.turns, 'startFakeProvider(options).turns')]
  const wire = WIRE[format]
  const requests: FakeProviderRequest[] = []
  let answered = 0

  const answer = (req: IncomingMessage, res: ServerResponse, text: string) => {
    const path = req.url ?? '/'
    let body: unknown = text
    try {
      body = text === '' ? null : JSON.parse(text)
    } catch {
      // Kept as text: the test sees what was sent.
    }
    const route = ROUTES[format].exec(path.split('?')[0])
    const fields = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {}
    const stream = format === 'gemini' ? route?.[2] === 'streamGenerateContent' : fields.stream === true
    requests.push({ method: req.method ?? '', path, headers: req.headers, body, stream })
    const fail = (status: number, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(wire.error(status, message)))
    }
    if (req.method !== 'POST' || route === null)
      return fail(404, `startFakeProvider (${format}): no such endpoint: ${req.method} ${path}`)
    const turn = turnAt(turns, answered++)
    if (turn === undefined)
      return fail(
        500,
        `startFakeProvider (${format}): the script has ${turns.length} turns; request ${answered} has none`,
      )
    if (turn.error !== undefined) return fail(turn.error.status, turn.error.message)
    // A native tool search runs here, server-side, over the tools the request marked defer_loading.
    const found = searchOfTurn(format, body, turn.toolSearch)
    if (typeof found === 'string') return fail(400, `startFakeProvider (${format}): ${found}`)
    const model = format === 'gemini' ? decodeURIComponent(route[1]) : String(fields.model ?? 'fake-model')
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(wire.reply(turn, model, found)))
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    const events = wire.events(turn, model, found)
    // A hanging turn stops before the events that close the reply and waits for the client to leave.
    for (const { event, data } of turn.hang ? events.slice(0, -wire.tail) : events)
      res.write(`${event !== undefined ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`)
    if (turn.hang) {
      res.flushHeaders()
      return
    }
    res.end(wire.end ?? '')
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => answer(req, res, Buffer.concat(chunks).toString('utf8')))
    req.on('error', () => res.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
    return closing
  }
  return { url: `http://127.0.0.1:${port}`, requests, close, [Symbol.asyncDispose]: close }
}
