// Issue 35, item 2 (stdio face, nothing lost): a client that writes its requests to `toolgate
// serve` and closes stdin at once gets every answer, then the process exits 0, in both eras. The
// built CLI as a real process. An upstream that holds its answers until the test creates a file
// makes the race deterministic: stdin has ended long before the answers can exist. A loop against
// a plain upstream covers the usual case, where the answers race the end of stdin.
//
// Two ends the client's leaving forces: a request the gateway would send the client (an approval's
// elicitation) fails at once instead of waiting out --drain-timeout, and a call still running when
// --drain-timeout passes is cancelled, answered and journaled as the HTTP drain's are.
import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readJournal } from '../../src/journal/read-journal.js'
import type { JournalRecord } from '../../src/journal/records.js'
import { BIN, tempDir, writeConfig } from './helpers.js'

const HELD = path.resolve(import.meta.dirname, '../fixtures/held-upstream.mjs')
const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
/** A loaded machine may take its time; every wait is for an event, bounded by this. */
const BOUND_MS = 60_000
const RUNS = 5
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

type Message = { id?: string | number; method?: string; result?: Record<string, unknown>; error?: unknown }

interface Run {
  readonly code: number | null
  readonly received: Message[]
  readonly stderr: string
}

/**
 * `serve` given every message in one write and stdin closed at once; `whileRunning` runs once the
 * client is gone (e.g. releases a held upstream). Resolves when the process exits (bounded).
 */
function writeAndClose(
  args: string[],
  messages: Record<string, unknown>[],
  whileRunning: (received: Message[]) => Promise<void> = async () => {},
): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  const received: Message[] = []
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    let at = stdout.indexOf('\n')
    while (at !== -1) {
      received.push(JSON.parse(stdout.slice(0, at)) as Message)
      stdout = stdout.slice(at + 1)
      at = stdout.indexOf('\n')
    }
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  // 'close', not 'exit': the answers are read from stdout, and by 'close' all of it has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  // A serve that exits before taking the write fails it with EPIPE: kept for the failure's message,
  // not thrown at the run (the exit code and the answers received say what went wrong).
  child.stdin.on('error', (error) => {
    stderr += `\n[the test's write failed: ${error.message}]`
  })
  child.stdin.end(messages.map((m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`).join(''))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`serve did not exit within ${BOUND_MS} ms; got ${JSON.stringify(received)}; stderr: ${stderr}`))
    }, BOUND_MS)
    void whileRunning(received)
      .then(() => exited)
      .then((code) => {
        clearTimeout(timer)
        resolve({ code, received, stderr })
      }, reject)
  })
}

const legacyRequests = (tool: string, text: string) => [
  {
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'eof', version: '1' } },
  },
  { method: 'notifications/initialized' },
  { id: 2, method: 'tools/list' },
  { id: 3, method: 'tools/call', params: { name: tool, arguments: { text } } },
]

const modernRequests = (tool: string, text: string) => [
  { id: 1, method: 'server/discover', params: { _meta: ENVELOPE } },
  { id: 2, method: 'tools/list', params: { _meta: ENVELOPE } },
  { id: 3, method: 'tools/call', params: { name: tool, arguments: { text }, _meta: ENVELOPE } },
]

/** Every request answered once, the list naming the tool, the call's result carrying the text. */
function expectAllAnswered(run: Run, tool: string, text: string): void {
  const context = `stderr: ${run.stderr}; received: ${JSON.stringify(run.received)}`
  const answers = run.received.filter((m) => m.method === undefined)
  expect(answers.map((m) => m.id).sort(), context).toEqual([1, 2, 3])
  for (const answer of answers) expect(answer.error, context).toBeUndefined()
  const list = answers.find((m) => m.id === 2)?.result?.tools as { name: string }[]
  expect(list.map((t) => t.name)).toContain(tool)
  expect(JSON.stringify(answers.find((m) => m.id === 3)?.result?.content)).toContain(text)
  expect(run.code, context).toBe(0)
}

/** The file's text once it exists (polled: the upstream writes it when it runs), bounded. */
async function waitForFile(file: string): Promise<void> {
  const until = Date.now() + BOUND_MS
  while (!(await readFile(file, 'utf8').catch(() => ''))) {
    if (Date.now() > until) throw new Error(`${file} was not written within ${BOUND_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

let dir: string
let cleanup: () => Promise<void>
let plain: string
let serial = 0
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  plain = await writeConfig(dir, { servers: { up: { command: process.execPath, args: [UPSTREAM] } } }, 'plain.json')
})
afterAll(() => cleanup())

async function heldConfig(): Promise<{ config: string; release: string }> {
  const release = path.join(dir, `release-${++serial}`)
  const config = await writeConfig(
    dir,
    { servers: { held: { command: process.execPath, args: [HELD, release] } } },
    `held-${serial}.json`,
  )
  return { config, release }
}

describe('serve over stdio answers every request read before stdin ended, then exits 0', () => {
  // The two held cases run at once (each its own gateway, upstream and release file): each waits on
  // its own upstream. The runs against a plain upstream below stay one at a time, as the race they
  // repeat was written to run.
  it.concurrent('2025 era: initialize, initialized, tools/list and tools/call, stdin closed before the upstream answers', {
    timeout: 2 * BOUND_MS,
  }, async ({ expect }) => {
    const { config, release } = await heldConfig()
    const run = await writeAndClose(
      ['--config', config, '--root', dir],
      legacyRequests('held__echo', 'late'),
      async (received) => {
        // The initialize is answered once the upstream initialized; its lists are still held.
        const until = Date.now() + BOUND_MS
        while (!received.some((m) => m.id === 1) && Date.now() < until)
          await new Promise((resolve) => setTimeout(resolve, 25))
        expect(received.some((m) => m.id === 2 || m.id === 3)).toBe(false)
        await writeFile(release, '')
      },
    )
    expectAllAnswered(run, 'held__echo', 'late')
  })

  it.concurrent('2026 era: server/discover, tools/list and tools/call, stdin closed before the upstream answers', {
    timeout: 2 * BOUND_MS,
  }, async ({ expect }) => {
    const { config, release } = await heldConfig()
    const run = await writeAndClose(
      ['--config', config, '--root', dir],
      modernRequests('held__echo', 'late'),
      async (received) => {
        await waitForFile(`${release}.pid`)
        expect(received).toEqual([])
        await writeFile(release, '')
      },
    )
    expectAllAnswered(run, 'held__echo', 'late')
  })

  it(`both eras, ${RUNS} runs each against a plain upstream: nothing is lost to the race with stdin's end`, {
    timeout: 2 * RUNS * BOUND_MS,
  }, async () => {
    for (let i = 0; i < RUNS; i++) {
      expectAllAnswered(
        await writeAndClose(['--config', plain, '--root', dir], legacyRequests('up__echo', `legacy-${i}`)),
        'up__echo',
        `legacy-${i}`,
      )
      expectAllAnswered(
        await writeAndClose(['--config', plain, '--root', dir], modernRequests('up__echo', `modern-${i}`)),
        'up__echo',
        `modern-${i}`,
      )
    }
  })
})

// These cases run at once (each its own config, gateway and files): two of them wait out a
// --drain-timeout of 1 s, the third the client's end.
describe.concurrent('serve over stdio, once the client ended stdin (issue 35, item 2)', () => {
  it('2025 era: an approval asked of the client fails at once (it can never answer); the call ends, the process exits 0', {
    timeout: 2 * BOUND_MS,
  }, async ({ expect }) => {
    const config = await writeConfig(dir, { policy: { ask: ['write_file'] } }, 'ask.json')
    // A drain bound far beyond the test's own: only failing at once lets the process exit in time.
    const run = await writeAndClose(
      ['--config', config, '--root', dir, '--drain-timeout', '3600'],
      [
        {
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: { elicitation: {} },
            clientInfo: { name: 'eof', version: '1' },
          },
        },
        { method: 'notifications/initialized' },
        { id: 2, method: 'tools/call', params: { name: 'write_file', arguments: { path: 'asked.txt', content: 'x' } } },
      ],
    )
    const context = `stderr: ${run.stderr}; received: ${JSON.stringify(run.received)}`
    expect(run.code, context).toBe(0)
    const answer = run.received.find((m) => m.id === 2 && m.method === undefined)
    expect(answer?.result?.isError, context).toBe(true)
    expect(run.stderr).toMatch(/ended stdin, so it can never answer this request/)
    expect(await readFile(path.join(dir, 'asked.txt'), 'utf8').catch(() => 'not written')).toBe('not written')
  })

  for (const era of ['2025', '2026'] as const)
    it(`${era} era: a call still running when --drain-timeout passes is cancelled, answered and journaled`, {
      timeout: 2 * BOUND_MS,
    }, async ({ expect }) => {
      const journal = path.join(dir, `journal-${era}.jsonl`)
      const config = await writeConfig(
        dir,
        { servers: { up: { command: process.execPath, args: [UPSTREAM] } }, journal },
        `slow-${era}.json`,
      )
      const slow = { name: 'up__slow', arguments: { ms: 10 * BOUND_MS } }
      const messages =
        era === '2025'
          ? [
              legacyRequests('up__slow', '')[0],
              { method: 'notifications/initialized' },
              { id: 3, method: 'tools/call', params: slow },
            ]
          : [
              { id: 1, method: 'server/discover', params: { _meta: ENVELOPE } },
              { id: 3, method: 'tools/call', params: { ...slow, _meta: ENVELOPE } },
            ]
      const run = await writeAndClose(['--config', config, '--root', dir, '--drain-timeout', '1'], messages)
      const context = `stderr: ${run.stderr}; received: ${JSON.stringify(run.received)}`
      expect(run.code, context).toBe(0)
      // The 2026 face logs the transport's reports at debug level only.
      if (era === '2025') expect(run.stderr).toMatch(/cancelling 1 request\(s\) still unanswered/)
      const answer = run.received.find((m) => m.id === 3 && m.method === undefined)
      expect(answer?.result?.isError, context).toBe(true)
      expect(JSON.stringify(answer?.result?.content), context).toMatch(/was cancelled/)
      const records: JournalRecord[] = []
      for await (const record of readJournal(journal)) records.push(record)
      const ended = records.find((r) => r.type === 'result' && r.toolName === 'up__slow')
      expect(ended, JSON.stringify(records)).toMatchObject({
        result: { isError: true, error: { info: { code: 'ABORTED' } } },
      })
    })
})
