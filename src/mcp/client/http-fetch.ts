// The fetch the Streamable HTTP client transport uses to reach an upstream MCP server.
import { type ClientRequest, Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { FetchLike } from '../protocol/wire-types.js'

// Idle connections are kept for reuse, and closed before the server's announced keep-alive
// timeout (a second early), or after this long when it announces none.
const IDLE_MS = 4000
const agents = {
  'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_MS }),
  'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_MS }),
}

/** Statuses whose response has no body, so a Response for them cannot be given one. */
const NULL_BODY = new Set([204, 205, 304])

/**
 * The requests in progress under each abort signal. The SDK passes one signal for the life of the
 * transport, so one listener per signal (not per request) serves them all.
 */
const pending = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>()

function onAbortOf(signal: AbortSignal | undefined, abort: (reason: unknown) => void): () => void {
  if (signal === undefined) return () => {}
  let aborts = pending.get(signal)
  if (aborts === undefined) {
    const set = new Set<(reason: unknown) => void>()
    aborts = set
    pending.set(signal, set)
    signal.addEventListener(
      'abort',
      () => {
        const reason = abortReason(signal)
        for (const each of [...set]) each(reason)
        set.clear()
      },
      { once: true },
    )
  }
  const set = aborts
  set.add(abort)
  return () => void set.delete(abort)
}

/**
 * `fetch` for the requests the MCP SDK's Streamable HTTP client makes to the MCP endpoint (a
 * POST of one JSON text, the GET of the server's stream, the DELETE that ends the session), over
 * node:http with kept-alive connections. The platform's fetch spends several times the CPU per
 * request, which a gateway pays on every call it forwards. The SDK asks for redirects back
 * (`redirect: 'manual'`) and follows them itself; a redirect is answered here as it came. Any
 * other request (one with another kind of body, redirects to follow, or another scheme) goes to
 * the platform's fetch.
 */
export const upstreamFetch: FetchLike = (url, init) => {
  const target = typeof url === 'string' ? new URL(url) : url
  const body = init?.body
  if (
    init?.redirect !== 'manual' ||
    (body !== undefined && body !== null && typeof body !== 'string') ||
    (target.protocol !== 'http:' && target.protocol !== 'https:')
  )
    return fetch(url, init)
  const signal = init.signal ?? undefined
  if (signal?.aborted) return Promise.reject(abortReason(signal))
  const headers: Record<string, string> = { 'user-agent': 'node' }
  // The SDK passes a Headers object; anything else is read through one.
  const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers)
  given.forEach((value, name) => {
    headers[name] = value
  })
  if (typeof body === 'string') headers['content-length'] = String(Buffer.byteLength(body))
  return new Promise<Response>((resolve, reject) => {
    const secure = target.protocol === 'https:'
    const send = secure ? httpsRequest : httpRequest
    const agent = secure ? agents['https:'] : agents['http:']
    const req: ClientRequest = send(target, { method: init.method ?? 'GET', headers, agent })
    let response: IncomingMessage | undefined
    // Set while the body is being read; `finish` ends it once (with an error, or closed when undefined).
    let finish: ((error?: unknown) => void) | undefined
    const forget = onAbortOf(signal, (reason) => {
      req.destroy()
      response?.destroy()
      if (finish) finish(reason)
      else reject(reason)
    })
    // on, not once: a second error must not go unhandled.
    req.on('error', (cause) => {
      forget()
      reject(new TypeError('fetch failed', { cause }))
    })
    req.once('response', (res) => {
      response = res
      const status = res.statusCode ?? 0
      const responseHeaders = new Headers()
      const raw = res.rawHeaders
      let answer: Response
      try {
        for (let i = 0; i + 1 < raw.length; i += 2) responseHeaders.append(raw[i] as string, raw[i + 1] as string)
        const head = { status, statusText: res.statusMessage ?? '', headers: responseHeaders }
        if (NULL_BODY.has(status)) {
          res.resume()
          forget()
          return resolve(new Response(null, head))
        }
        answer = new Response(
          bodyOf(res, (end) => (finish = end), forget),
          head,
        )
      } catch (cause) {
        // A status or header the Response type cannot carry.
        res.destroy()
        forget()
        return reject(new TypeError('fetch failed', { cause }))
      }
      resolve(answer)
    })
    req.end(body ?? undefined)
  })
}

/** The body of `res` as a web stream, read as it is consumed; `expose` receives the function that ends it. */
function bodyOf(
  res: IncomingMessage,
  expose: (finish: (error?: unknown) => void) => void,
  forget: () => void,
): ReadableStream<Uint8Array> {
  let done = false
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (error?: unknown) => {
        if (done) return
        done = true
        forget()
        if (error === undefined) controller.close()
        else controller.error(error)
      }
      expose(finish)
      res.on('data', (chunk: Buffer) => {
        if (done) return
        controller.enqueue(chunk)
        if ((controller.desiredSize ?? 1) <= 0) res.pause()
      })
      res.once('end', () => finish())
      // A connection lost mid-body is a failed read for whoever reads the body.
      res.once('close', () => finish(new TypeError('terminated')))
      res.on('error', () => finish(new TypeError('terminated')))
    },
    pull() {
      res.resume()
    },
    cancel() {
      done = true
      forget()
      res.destroy()
    },
  })
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}
