// Issue 22: a journal that never ends must not grow memory without bound. Every reader of journals
// (readJournal, resumeModelLoop's evidence, the viewer's snapshot, follower and server) refuses
// what is not a regular file, and ends on a line longer than its limit with a clear error.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  DEFAULT_MAX_LINE_BYTES,
  JournalReadError,
  type JournalRecord,
  readJournal,
  type SkippedJournalLine,
} from '../../src/index.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { JournalFollower } from '../../src/viewer/follow.js'
import { startViewer } from '../../src/viewer/server.js'
import { readSessionSnapshot } from '../../src/viewer/static.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-journal-limits-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const file = (name: string) => join(dir, `${n++}-${name}`)

const record = (callId: string) =>
  `${JSON.stringify({ v: 1, type: 'call-started', ts: 1, callId, rootCallId: callId, parentCallId: null, agentId: null, toolName: 'add', arguments: { a: 1 } })}\n`

async function collect(path: string, options: Parameters<typeof readJournal>[1] = {}): Promise<JournalRecord[]> {
  const out: JournalRecord[] = []
  for await (const r of readJournal(path, options)) out.push(r)
  return out
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

const fifo = (() => {
  const path = file('fifo')
  try {
    execFileSync('mkfifo', [path])
    return path
  } catch {
    return undefined
  }
})()

// Bounded generously: without the check, each of these reads forever (about 700 MB/s of growth).
const HANG_BOUND = 20_000

describe('journal readers refuse what is not a regular file (issue 22)', () => {
  const refused = [
    ['/dev/zero', 'a device'],
    ['/dev/full', 'a device'],
    [dir, 'a directory'],
  ]
  it.each(refused)(
    'readJournal(%s) fails at once, naming the path',
    async (path, kind) => {
      const error = await rejection(collect(path))
      expect(error).toBeInstanceOf(JournalReadError)
      expect((error as JournalReadError).code).toBe('INVALID_JOURNAL')
      expect((error as JournalReadError).path).toBe(path)
      expect((error as Error).message).toBe(`journal ${path}: not a regular file (it is ${kind})`)
    },
    HANG_BOUND,
  )

  it(
    'a FIFO is refused without waiting for a writer',
    async () => {
      expect(fifo, 'mkfifo is available').toBeDefined()
      const error = await rejection(collect(fifo as string))
      expect((error as Error).message).toBe(`journal ${fifo}: not a regular file (it is a FIFO)`)
    },
    HANG_BOUND,
  )

  it(
    'resumeModelLoop({ journal: "/dev/zero" }) is refused before any pending call runs',
    async () => {
      const marker = file('marker')
      const env = await setupTurn({ marker })
      const first = await runModelLoop({
        tools: env.tools,
        agent: env.agent,
        model: scriptedModel(),
        messages: [{ role: 'user', content: 'update the files' }],
      })
      expect(first.stopReason).toBe('approval-required')
      const error = await rejection(
        resumeModelLoop({
          state: first.state!,
          decisions: { call_b: { kind: 'allowed-once' }, call_c: { kind: 'allowed-once' } },
          tools: env.tools,
          agent: env.agent,
          model: scriptedModel(),
          journal: '/dev/zero',
        }),
      )
      expect(error).toBeInstanceOf(JournalReadError)
      expect((error as Error).message).toContain('journal /dev/zero: not a regular file')
      expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean)).toEqual(['read:a.txt'])
    },
    HANG_BOUND,
  )

  it(
    'the viewer refuses it: the static snapshot and the live server',
    async () => {
      const snapshot = await rejection(readSessionSnapshot('/dev/zero'))
      expect((snapshot as Error).message).toBe('journal /dev/zero: not a regular file (it is a device)')
      const served = await rejection(startViewer({ journal: '/dev/full' }))
      expect((served as Error).message).toBe('journal /dev/full: not a regular file (it is a device)')
      const missing = await rejection(startViewer({ journal: join(dir, 'absent.jsonl') }))
      expect((missing as Error).message).toContain('journal: not found')
    },
    HANG_BOUND,
  )

  it(
    'the follower refuses it and stops',
    async () => {
      const errors: unknown[] = []
      const follower = new JournalFollower('/dev/zero', {
        onRecords: () => expect.unreachable('no records from a device'),
        onReset: () => undefined,
        onError: (error) => errors.push(error),
      })
      await follower.start()
      follower.close()
      expect(errors).toHaveLength(1)
      expect(errors[0]).toBeInstanceOf(JournalReadError)
    },
    HANG_BOUND,
  )
})

describe('journal readers bound a line (issue 22)', () => {
  it('the default limit is 64 MiB', () => {
    expect(DEFAULT_MAX_LINE_BYTES).toBe(64 * 1024 * 1024)
  })

  it('a line over maxLineBytes ends the read with an error naming the path, the line and the limit', async () => {
    const path = file('long.jsonl')
    writeFileSync(path, `${record('ok')}${'x'.repeat(5000)}\n${record('after')}`)
    const seen: string[] = []
    let error: unknown
    try {
      for await (const r of readJournal(path, { maxLineBytes: 1000 })) seen.push(r.callId)
    } catch (caught) {
      error = caught
    }
    expect(seen).toEqual(['ok'])
    expect(error).toBeInstanceOf(JournalReadError)
    expect((error as Error).message).toBe(
      `journal ${path}: line 2 is longer than 1000 bytes (the reader's maxLineBytes); the journal is not a journal, or it needs a higher limit`,
    )
  })

  it('a file without newlines fails once the limit is buffered, not at its end', async () => {
    // 64 KiB chunks: the 4 MiB tail would be read whole without the bound; it stops at the second chunk.
    const path = file('no-newline.jsonl')
    writeFileSync(path, 'y'.repeat(4 * 1024 * 1024))
    const error = await rejection(collect(path, { maxLineBytes: 100_000 }))
    expect((error as Error).message).toContain('line 1 is longer than 100000 bytes')
  })

  it('a line exactly at the limit is read', async () => {
    const path = file('exact.jsonl')
    const line = record('exact')
    writeFileSync(path, line)
    const skipped: SkippedJournalLine[] = []
    const out = await collect(path, { maxLineBytes: Buffer.byteLength(line) - 1, onSkip: (s) => skipped.push(s) })
    expect(out.map((r) => r.callId)).toEqual(['exact'])
    expect(skipped).toEqual([])
  })

  it('maxLineBytes must be a positive integer', async () => {
    const path = file('any.jsonl')
    writeFileSync(path, record('a'))
    for (const bad of [0, -1, 1.5, Number.NaN, '10'])
      await expect(collect(path, { maxLineBytes: bad as number })).rejects.toThrow(
        'readJournal(path, options).maxLineBytes: expected a positive integer',
      )
  })

  it('the viewer applies the limit too: the follower hands over the lines before it, then stops', async () => {
    const path = file('viewer-long.jsonl')
    writeFileSync(path, `${record('first')}${'z'.repeat(3000)}\n${record('never')}`)
    const ids: string[] = []
    const errors: unknown[] = []
    const follower = new JournalFollower(path, {
      maxLineBytes: 1000,
      onRecords: (records) => ids.push(...records.map((r) => r.callId)),
      onReset: () => undefined,
      onError: (error) => errors.push(error),
    })
    await follower.start()
    follower.close()
    expect(ids).toEqual(['first'])
    expect((errors[0] as Error).message).toContain('line 2 is longer than 1000 bytes')
    const served = await rejection(startViewer({ journal: path, maxLineBytes: 1000 }))
    expect((served as Error).message).toContain(`journal ${path}: line 2 is longer than 1000 bytes`)
    const snapshot = await rejection(readSessionSnapshot(path, { maxLineBytes: 1000 }))
    expect((snapshot as Error).message).toContain('line 2 is longer than 1000 bytes')
    expect(existsSync(path)).toBe(true)
  })
})
