import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/index.js'
import {
  CallbackApproval,
  createAgent,
  createToolRuntime,
  defineTool,
  Journal,
  type JournalRecord,
  readJournal,
  type SkippedJournalLine,
} from '../../src/index.js'
import { signal } from '../runtime/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-journal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const fresh = () => join(dir, `j${n++}.jsonl`)

const add = defineTool({
  name: 'add',
  description: 'Add two integers.',
  parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
  output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
  execute: async ({ a, b }) => a + b,
  isConcurrencySafe: () => true,
})

async function collect(path: string, onSkip?: (s: SkippedJournalLine) => void): Promise<JournalRecord[]> {
  const out: JournalRecord[] = []
  for await (const record of readJournal(path, { onSkip })) out.push(record)
  return out
}

async function setup(path: string, mode: 'native' | 'code' = 'native') {
  const { ctx, tools } = await createToolRuntime({ mode })
  tools.register(add)
  const fiber = await ctx.plugin(Journal, { path })
  return { ctx, tools, fiber }
}

describe('Journal (issue #14)', () => {
  it('writes call-started and result as one JSON line each, with the common fields', async () => {
    const path = fresh()
    const { ctx, tools } = await setup(path)
    const agent = createAgent(ctx, { id: 'agent-1' })
    const before = Date.now()
    const result = await tools.execute({
      callId: 'c1',
      name: 'add',
      arguments: { a: 2, b: 3 },
      agent,
      signal: signal(),
    })
    const lines = readFileSync(path, 'utf8').split('\n')
    expect(lines).toHaveLength(3) // two records and the final newline
    expect(lines[2]).toBe('')
    const records = await collect(path)
    expect(records.map((r) => r.type)).toEqual(['call-started', 'result'])
    const common = { v: 1, callId: 'c1', rootCallId: 'c1', parentCallId: null, agentId: 'agent-1', toolName: 'add' }
    expect(records[0]).toEqual({ ...common, type: 'call-started', ts: records[0].ts, arguments: { a: 2, b: 3 } })
    expect(records[0].ts).toBeGreaterThanOrEqual(before)
    expect(records[1]).toMatchObject({ ...common, type: 'result', result: JSON.parse(JSON.stringify(result)) })
    const last = records[1]
    expect(last.type === 'result' && last.durationMs).toBeGreaterThanOrEqual(0)
  })

  it('records a call without an agent and with arguments that are not JSON', async () => {
    const path = fresh()
    const { tools } = await setup(path)
    await tools.execute({ callId: 'x', name: 'add', arguments: { a: 1n }, signal: signal() })
    const records = await collect(path)
    expect(records[0]).toMatchObject({ type: 'call-started', agentId: null, arguments: null })
    expect(records[1]).toMatchObject({
      type: 'result',
      result: { isError: true, error: { info: { code: 'INVALID_ARGS' } } },
    })
  })

  it('records approval asked and answered, with the serializable request and the outcome', async () => {
    const path = fresh()
    const { ctx, tools } = await setup(path)
    await ctx.plugin(CallbackApproval, { decide: () => ({ kind: 'denied', reason: 'not now' }) })
    ctx.on('tools/pre-execute', async () => ({ kind: 'ask', reason: 'adds numbers' }))
    const agent = createAgent(ctx, { id: 'a' })
    await tools.execute({ callId: 'c', name: 'add', arguments: { a: 1, b: 1 }, agent, signal: signal() })
    const records = await collect(path)
    expect(records.map((r) => r.type)).toEqual(['call-started', 'approval-asked', 'approval-answered', 'result'])
    expect(records[1]).toMatchObject({
      type: 'approval-asked',
      request: {
        callId: 'c',
        rootCallId: 'c',
        parentCallId: null,
        agentId: 'a',
        toolName: 'add',
        arguments: { a: 1, b: 1 },
        reason: 'adds numbers',
      },
    })
    expect(records[2]).toMatchObject({
      type: 'approval-answered',
      outcome: { kind: 'denied', reason: 'not now' },
      standing: false,
    })
  })

  it('records Code Mode sub-calls with their parentCallId and the code-dispatch log', async () => {
    const path = fresh()
    const { ctx, tools } = await setup(path, 'code')
    const agent = createAgent(ctx, { id: 'coder' })
    const result = await tools.execute({
      callId: 'run',
      name: RUN_CODE_NAME,
      arguments: { code: 'return await tools.add({ a: 1, b: 2 })', description: 'add' },
      agent,
      signal: signal(),
    })
    expect(result.isError).toBe(false)
    const records = await collect(path)
    const sub = records.filter((r) => r.callId === 'run:code:1')
    expect(sub.map((r) => r.type)).toEqual(['call-started', 'result', 'code-dispatch'])
    for (const r of sub) {
      expect(r).toMatchObject({ parentCallId: 'run', rootCallId: 'run', agentId: 'coder', toolName: 'add' })
    }
    expect(sub[2]).toMatchObject({
      record: { parentCallId: 'run', subCallId: 'run:code:1', name: 'add', isError: false },
    })
    expect(records.at(-1)).toMatchObject({ type: 'result', callId: 'run', parentCallId: null })
  })

  it('reads back every record after 10,000 calls, in order', async () => {
    const path = fresh()
    const { tools } = await setup(path)
    for (let i = 0; i < 10_000; i++) {
      await tools.execute({ callId: `c${i}`, name: 'add', arguments: { a: i, b: 1 }, signal: signal() })
    }
    let count = 0
    let skipped = 0
    const wrong: string[] = []
    for await (const record of readJournal(path, { onSkip: () => skipped++ })) {
      const i = count >> 1
      const type = count % 2 === 0 ? 'call-started' : 'result'
      const value = record.type === 'result' && !record.result.isError ? record.result.value : i + 1
      if (record.callId !== `c${i}` || record.type !== type || value !== i + 1) wrong.push(JSON.stringify(record))
      count++
    }
    expect(wrong).toEqual([])
    expect(count).toBe(20_000)
    expect(skipped).toBe(0)
  })

  it('tolerates a torn last line, and a journal reopened after the crash keeps appending readable records', async () => {
    const path = fresh()
    const first = await setup(path)
    await first.tools.execute({ callId: 'a', name: 'add', arguments: { a: 1, b: 1 }, signal: signal() })
    await first.fiber.dispose()
    // A crash mid-write: half of a record, no newline.
    appendFileSync(path, '{"v":1,"type":"result","ts":1,"callId":"b","rootCallId":"b","parentCa')
    const skipped: SkippedJournalLine[] = []
    const afterCrash = await collect(path, (s) => skipped.push(s))
    expect(afterCrash.map((r) => `${r.callId}/${r.type}`)).toEqual(['a/call-started', 'a/result'])
    expect(skipped).toEqual([expect.objectContaining({ line: 3, reason: 'torn' })])

    const second = await setup(path)
    await second.tools.execute({ callId: 'c', name: 'add', arguments: { a: 2, b: 2 }, signal: signal() })
    skipped.length = 0
    const after = await collect(path, (s) => skipped.push(s))
    expect(after.map((r) => `${r.callId}/${r.type}`)).toEqual([
      'a/call-started',
      'a/result',
      'c/call-started',
      'c/result',
    ])
    expect(skipped).toEqual([expect.objectContaining({ line: 3, reason: 'malformed' })])
  })

  it('skips unknown record types and keeps unknown fields (forward compatible)', async () => {
    const path = fresh()
    const base = { v: 1, ts: 1, callId: 'a', rootCallId: 'a', parentCallId: null, agentId: null, toolName: 't' }
    writeFileSync(
      path,
      `${[
        JSON.stringify({ ...base, type: 'something-new', extra: 1 }),
        JSON.stringify({ ...base, type: 'call-started', arguments: {}, futureField: 'x' }),
        JSON.stringify({ ...base, v: 2, type: 'call-started', arguments: {} }),
        '',
        '[1,2]',
      ].join('\n')}\n`,
    )
    const skipped: SkippedJournalLine[] = []
    const records = await collect(path, (s) => skipped.push(s))
    expect(records).toEqual([{ ...base, type: 'call-started', arguments: {}, futureField: 'x' }])
    expect(skipped.map((s) => [s.line, s.reason])).toEqual([
      [1, 'unknown'],
      [3, 'unknown'],
      [5, 'malformed'],
    ])
  })

  it('follows a growing journal and yields a line only once it is complete', async () => {
    const path = fresh()
    writeFileSync(path, '')
    const controller = new AbortController()
    const seen: string[] = []
    const reading = (async () => {
      for await (const record of readJournal(path, { follow: true, signal: controller.signal, pollIntervalMs: 5 })) {
        seen.push(record.callId)
        if (seen.length === 2) controller.abort()
      }
    })()
    const base = {
      v: 1,
      type: 'call-started',
      ts: 1,
      rootCallId: 'r',
      parentCallId: null,
      agentId: null,
      toolName: 't',
    }
    const line = JSON.stringify({ ...base, callId: 'one', arguments: null })
    appendFileSync(path, line.slice(0, 20))
    await new Promise((r) => setTimeout(r, 30))
    expect(seen).toEqual([])
    appendFileSync(path, `${line.slice(20)}\n`)
    appendFileSync(path, `${JSON.stringify({ ...base, callId: 'two', arguments: null })}\n`)
    await reading
    expect(seen).toEqual(['one', 'two'])
  })

  it('writes arguments nested 100,000 levels deep', async () => {
    const path = fresh()
    const { ctx, tools } = await setup(path)
    tools.register({
      name: 'deep',
      description: 'accepts anything',
      parameters: { type: 'object' },
      output: { schema: { type: 'null' }, render: () => [] },
      execute: async () => null,
    })
    let deep: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) deep = { d: deep }
    await tools.execute({ callId: 'd', name: 'deep', arguments: deep, signal: signal() })
    void ctx
    const records = await collect(path)
    expect(records.map((r) => r.type)).toEqual(['call-started', 'result'])
    let depth = 0
    let cursor = records[0].type === 'call-started' ? records[0].arguments : null
    while (cursor !== null && typeof cursor === 'object' && !Array.isArray(cursor)) {
      cursor = (cursor as { d: unknown }).d as typeof cursor
      depth++
    }
    expect(depth).toBe(100_000)
    expect(cursor).toBe('leaf')
  })

  it('rejects a bad config with a clear error', async () => {
    const { ctx } = await createToolRuntime()
    await expect(ctx.plugin(Journal, { path: '' })).rejects.toThrow(
      /^Journal config\.path: expected a non-empty file path/,
    )
    await expect(ctx.plugin(Journal, { path: fresh(), fsync: 'yes' as never })).rejects.toThrow(
      /^Journal config\.fsync: expected a boolean/,
    )
  })
})
