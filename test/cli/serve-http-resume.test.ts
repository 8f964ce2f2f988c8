// Issue 23 item 6: `serve --http` streams are resumable. Every SSE stream starts with a priming
// event carrying the retry interval; a client whose stream is cut mid-call resumes it with
// Last-Event-ID and gets every event it missed exactly once, the result included; a resume from an
// event the bounded store has dropped is refused with the reason.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/config-error.js'
import { parseConfig } from '../../src/gateway/config.js'
import { type Connected, serveHttp, tempDir, textOf, writeConfig } from './helpers.js'

/** One SSE response the client read: what it asked with, and the text it was given. */
interface Seen {
  method: string
  body: string
  lastEventId: string | null
  text: string
  cut: boolean
}

/**
 * A fetch that records every SSE response, remembers the session id and, when armed, cuts the
 * tools/call stream right after the first progress event: the client sees exactly that much and
 * then a network error, as if the connection dropped.
 */
function recordingFetch() {
  const seen: Seen[] = []
  const state = {
    armed: false,
    /** `close`: the cut closes the connection; `silent`: the server keeps writing to it, unaware. */
    mode: 'close' as 'close' | 'silent',
    sessionId: undefined as string | undefined,
  }
  const fetchFn: FetchLike = async (url, init) => {
    const response = await fetch(url, init)
    const sessionId = response.headers.get('mcp-session-id')
    if (sessionId !== null) state.sessionId = sessionId
    if (!response.headers.get('content-type')?.includes('text/event-stream') || response.body === null) return response
    const headers = new Headers(init?.headers)
    const record: Seen = {
      method: init?.method ?? 'GET',
      body: typeof init?.body === 'string' ? init.body : '',
      lastEventId: headers.get('last-event-id'),
      text: '',
      cut: false,
    }
    seen.push(record)
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    const encoder = new TextEncoder()
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
        if (done || value === undefined) return controller.close()
        const chunk = decoder.decode(value, { stream: true })
        if (state.armed && record.body.includes('"tools/call"')) {
          const all = record.text + chunk
          const at = all.indexOf('notifications/progress')
          const end = at < 0 ? -1 : all.indexOf('\n\n', at)
          if (end >= 0) {
            state.armed = false
            const kept = all.slice(record.text.length, end + 2)
            record.text += kept
            record.cut = true
            controller.enqueue(encoder.encode(kept))
            if (state.mode === 'close') await reader.cancel().catch(() => {})
            else void drain(reader)
            return controller.error(new TypeError('connection lost (cut by the test)'))
          }
        }
        record.text += chunk
        controller.enqueue(value)
      },
      cancel: (reason) => reader.cancel(reason),
    })
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
  return { fetchFn, seen, state }
}

/** Reads what the server still sends to a connection the client has given up on, and drops it. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    while (!(await reader.read()).done) {}
  } catch {
    // the connection ended
  }
}

/** The `id:` of every event in an SSE text, in order. */
const eventIds = (text: string): string[] => [...text.matchAll(/^id: (.*)$/gm)].map((m) => m[1] as string)

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 30_000
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('toolgate serve --http resumability', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let s: Connected
  const rec = recordingFetch()

  beforeAll(async () => {
    ;({ dir, cleanup } = await tempDir())
    const config = await writeConfig(dir, { root: '.', bash: true, http: { retryMs: 200 } })
    s = await serveHttp(['--config', config], {}, { fetch: rec.fetchFn })
  })
  afterAll(async () => {
    await s?.close()
    await cleanup()
  })

  it.each([
    ['close', 'the connection closes'],
    ['silent', 'the server does not notice the connection is gone'],
  ] as const)(
    'a stream cut mid-call (%s: %s) resumes with Last-Event-ID and gets every missed event once, the result included',
    async (mode, _how) => {
      const progress: number[] = []
      const start = rec.seen.length
      rec.state.mode = mode
      rec.state.armed = true
      const call = s.client.callTool(
        {
          name: 'bash',
          arguments: {
            command: `echo first; while [ ! -e go-${mode} ]; do sleep 0.05; done; echo second; sleep 0.4; echo third; sleep 0.4; echo last`,
          },
        },
        undefined,
        { onprogress: (p) => void progress.push(p.progress), timeout: 120_000 },
      )
      const seen = () => rec.seen.slice(start)
      await waitFor(() => seen().some((r) => r.cut), 'the tools/call stream to be cut')
      // The rest of the call happens while the client has no stream.
      await writeFile(path.join(dir, `go-${mode}`), '')
      const result = await call
      expect(textOf(result)).toMatch(/first[\s\S]*second[\s\S]*third[\s\S]*last/)

      const cut = seen().find((r) => r.cut) as Seen
      const resumed = seen().filter((r) => r.lastEventId !== null)
      expect(resumed).toHaveLength(1)
      const resume = resumed[0] as Seen
      expect(resume.method).toBe('GET')
      // The priming event opens the stream: an id, the retry interval and no data.
      expect(cut.text).toMatch(/^id: \S+\nretry: 200\ndata: \n\n/)
      const before = eventIds(cut.text)
      expect(before).toHaveLength(2) // the priming event and the first progress
      expect(resume.lastEventId).toBe(before[1])
      const after = eventIds(resume.text)
      // Nothing twice, nothing skipped: the stream's events are consecutive from priming to result.
      const all = [...before, ...after]
      expect(new Set(all).size).toBe(all.length)
      const seqs = all.map((id) => Number(id.slice(id.lastIndexOf('.') + 1)))
      expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i))
      expect(resume.text).toContain('notifications/progress')
      expect(resume.text.trimEnd().split('\n\n').at(-1)).toMatch(/"result":\{/)
      expect(progress.length).toBeGreaterThanOrEqual(2)
      expect(progress).toEqual(progress.map((_, i) => i + 1))
    },
  )
})

describe('toolgate serve --http bounded event store', () => {
  it('refuses a resume from an evicted or unknown event with the reason', async () => {
    const { dir, cleanup } = await tempDir()
    const rec = recordingFetch()
    const config = await writeConfig(dir, { root: '.', http: { eventStore: { maxEvents: 2 } } })
    const s = await serveHttp(['--config', config], {}, { fetch: rec.fetchFn })
    try {
      await writeFile(path.join(dir, 'a.txt'), 'alpha\n')
      await s.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
      const first = eventIds(rec.seen.at(-1)?.text ?? '')[0] as string
      expect(first).toBeDefined()
      await s.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
      const resume = (lastEventId: string) =>
        fetch(s.url as string, {
          headers: {
            accept: 'text/event-stream',
            'mcp-session-id': rec.state.sessionId as string,
            'mcp-protocol-version': '2025-11-25',
            'last-event-id': lastEventId,
          },
        })
      const evicted = await resume(first)
      expect(evicted.status).toBe(400)
      expect(((await evicted.json()) as { error: { message: string } }).error.message).toMatch(
        /is no longer stored \(the session keeps its last 2 events.*cannot be replayed/,
      )
      const unknown = await resume('made-up.1')
      expect(unknown.status).toBe(400)
      expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(
        /not an event of this session/,
      )
    } finally {
      await s.close()
      await cleanup()
    }
  })
})

describe('the http resumability config', () => {
  it('accepts http.eventStore and http.retryMs', () => {
    const config = parseConfig(
      JSON.stringify({ http: { eventStore: { maxEvents: 10, maxBytes: 65536, ttlMs: 1000 }, retryMs: 0 } }),
      'ok.json',
    )
    expect(config.http).toEqual({ eventStore: { maxEvents: 10, maxBytes: 65536, ttlMs: 1000 }, retryMs: 0 })
  })

  it('reports unknown keys and bad values with their paths', () => {
    let error: unknown
    try {
      parseConfig(
        JSON.stringify({ http: { eventStore: { maxEvents: 0, size: 1, ttlMs: '1' }, retryMs: -1 } }),
        'bad.json',
      )
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^http\.eventStore\.size: unknown key/),
        expect.stringMatching(/^http\.eventStore\.maxEvents: expected a whole number above 0, got 0/),
        expect.stringMatching(/^http\.eventStore\.ttlMs: expected a whole number above 0, got "1"/),
        expect.stringMatching(/^http\.retryMs: expected a whole number of ms, at least 0, got -1/),
      ]),
    )
  })
})
