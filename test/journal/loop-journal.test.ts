// The model loop's side of the journal (issue 25 item 6): a real runModelLoop / streamModelLoop /
// resumeModelLoop with scriptedModel and the real Journal plugin writes the user's prompt, the
// model's text per step, the calls each step emitted and how they were scheduled, and the turn's
// end; the call records carry the approval wait apart from the run; bash results name their sandbox.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  CallbackApproval,
  createAgent,
  createBashTool,
  createToolRuntime,
  Journal,
  type JournalRecord,
  MAX_MODEL_TEXT_CHARS,
  readJournal,
  SuspendingApproval,
} from '../../src/index.js'
import { resumeModelLoop, runModelLoop, streamModelLoop } from '../../src/providers/index.js'
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js'
import { registerLookAndWrite } from './look-and-write.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-loop-journal-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function records(path: string): Promise<JournalRecord[]> {
  const out: JournalRecord[] = []
  for await (const record of readJournal(path)) out.push(record)
  return out
}

/** `look` (parallel-safe), `write` (asks for approval), `bash` (unconfined), journaled to `journal`. */
async function session(journal: string, approval: 'allow' | 'suspend') {
  const { ctx, tools } = await createToolRuntime()
  await ctx.plugin(Journal, { path: journal })
  if (approval === 'allow')
    await ctx.plugin(CallbackApproval, {
      // The decision takes a moment, as a person's would: the wait is recorded apart from the run.
      decide: async () => {
        await new Promise((resolve) => setImmediate(resolve))
        return { kind: 'allowed-once' }
      },
    })
  else await ctx.plugin(SuspendingApproval)
  const agent = createAgent(ctx, { id: 'agent-1' })
  registerLookAndWrite(tools)
  tools.register(createBashTool({ cwd: dir, sandbox: 'none' }))
  return { tools, agent }
}

const SCRIPT: ScriptedTurn[] = [
  {
    text: 'I will look at <b>both</b> files, then write.',
    toolCalls: [
      { id: 'c1', name: 'look', arguments: { path: 'a.ts' } },
      { id: 'c2', name: 'look', arguments: { path: 'b.ts' } },
      { id: 'c3', name: 'write', arguments: { path: 'c.ts' } },
      { id: 'c4', name: 'bash', arguments: { command: 'echo hi' } },
    ],
    usage: { inputTokens: 100, outputTokens: 20 },
  },
  { text: 'Done: <script>alert(1)</script>', usage: { inputTokens: 150, outputTokens: 8 } },
]

const MESSAGES = [
  { role: 'system' as const, content: 'You are careful.' },
  { role: 'user' as const, content: 'Please <i>check</i> a.ts and b.ts.' },
]

/** The records of one loop run, reduced to what the conversation is made of. */
function conversation(all: readonly JournalRecord[]) {
  return all.map((r) => {
    switch (r.type) {
      case 'turn-started':
        return { type: r.type, text: r.text, resumed: r.resumed, format: r.format }
      case 'model-reply':
        return { type: r.type, step: r.step, text: r.text, calls: r.calls }
      case 'step-ended':
        return { type: r.type, step: r.step, groups: r.groups, usage: r.usage }
      case 'turn-ended':
        return { type: r.type, stopReason: r.stopReason, usage: r.usage }
      default:
        return { type: r.type, callId: r.callId }
    }
  })
}

describe('the model loop journals the conversation', () => {
  it('runModelLoop: prompt, model text per step, the calls of each step, scheduling groups, usage, end', async () => {
    const journal = join(dir, 'session.jsonl')
    const { tools, agent } = await session(journal, 'allow')
    const result = await runModelLoop({
      tools,
      agent,
      model: scriptedModel({ turns: SCRIPT }),
      messages: MESSAGES,
      journal,
    })
    expect(result.stopReason).toBe('done')
    const all = await records(journal)
    const model = conversation(all).filter((r) => !('callId' in r))
    expect(model).toEqual([
      { type: 'turn-started', text: 'Please <i>check</i> a.ts and b.ts.', resumed: false, format: 'openai-chat' },
      {
        type: 'model-reply',
        step: 0,
        text: 'I will look at <b>both</b> files, then write.',
        calls: [
          { callId: 'c1', name: 'look' },
          { callId: 'c2', name: 'look' },
          { callId: 'c3', name: 'write' },
          { callId: 'c4', name: 'bash' },
        ],
      },
      {
        type: 'step-ended',
        step: 0,
        // The two looks shared the parallel pool; the write and bash ran alone, in order.
        groups: [['c1', 'c2'], ['c3'], ['c4']],
        usage: expect.objectContaining({ inputTokens: 100, outputTokens: 20, totalTokens: 120 }),
      },
      { type: 'model-reply', step: 1, text: 'Done: <script>alert(1)</script>', calls: [] },
      {
        type: 'step-ended',
        step: 1,
        groups: [],
        usage: expect.objectContaining({ inputTokens: 150, outputTokens: 8, totalTokens: 158 }),
      },
      {
        type: 'turn-ended',
        stopReason: 'done',
        usage: expect.objectContaining({ inputTokens: 250, outputTokens: 28, totalTokens: 278 }),
      },
    ])
    // Every record belongs to the one turn: the model side's (its id in callId too) and, since the
    // turn emitted them, its calls' (issue 36, item 8); the step's reply comes before its calls run.
    const turnIds = new Set(all.map((r) => r.turnId))
    expect(turnIds.size).toBe(1)
    const [turnId] = turnIds
    expect(turnId).toMatch(/^turn-/)
    const modelSide = (r: (typeof all)[number]) => r.toolName === ''
    for (const r of all.filter(modelSide))
      expect(r).toMatchObject({ v: 1, callId: turnId, rootCallId: turnId, parentCallId: null, toolName: '' })
    const types = all.map((r) => `${r.type}${modelSide(r) ? '' : `:${r.callId}`}`)
    expect(types.indexOf('model-reply')).toBeLessThan(types.indexOf('call-started:c1'))
    expect(types.lastIndexOf('result:c4')).toBeLessThan(types.indexOf('step-ended'))

    // The write waited for its approval, and the result says how long apart from how long it ran.
    const write = all.find((r) => r.type === 'result' && r.callId === 'c3')
    expect(write?.type).toBe('result')
    if (write?.type !== 'result') return
    expect(write.approvalWaitMs).toEqual(expect.any(Number))
    expect(write.runMs).toEqual(expect.any(Number))
    expect(write.approvalWaitMs! + write.runMs!).toBeLessThanOrEqual(write.durationMs + 1)
    const look = all.find((r) => r.type === 'result' && r.callId === 'c1')
    expect(look).not.toHaveProperty('approvalWaitMs')
    expect(look).not.toHaveProperty('runMs')

    // The bash result names the sandbox its command ran in.
    const bash = all.find((r) => r.type === 'result' && r.callId === 'c4')
    expect(bash?.type === 'result' && bash.result.isError === false && bash.result.meta).toMatchObject({
      sandbox: 'none',
      exitCode: 0,
    })
  })

  it('streamModelLoop writes the same records', async () => {
    const journal = join(dir, 'stream.jsonl')
    const { tools, agent } = await session(journal, 'allow')
    for await (const event of streamModelLoop({
      tools,
      agent,
      model: scriptedModel({ turns: SCRIPT }),
      messages: MESSAGES,
      journal,
    })) {
      if (event.type === 'done') expect(event.stopReason).toBe('done')
    }
    const model = conversation(await records(journal)).filter((r) => !('callId' in r))
    expect(model.map((r) => r.type)).toEqual([
      'turn-started',
      'model-reply',
      'step-ended',
      'model-reply',
      'step-ended',
      'turn-ended',
    ])
    expect(model[1]).toMatchObject({ text: 'I will look at <b>both</b> files, then write.' })
    expect(model[2]).toMatchObject({ groups: [['c1', 'c2'], ['c3'], ['c4']] })
    expect(model[5]).toMatchObject({ stopReason: 'done', usage: { totalTokens: 278 } })
  })

  it('a suspended turn ends approval-required; its resume is a resumed turn that runs the rest', async () => {
    const journal = join(dir, 'suspend.jsonl')
    const { tools, agent } = await session(journal, 'suspend')
    const model = scriptedModel({ turns: SCRIPT })
    const first = await runModelLoop({ tools, agent, model, messages: MESSAGES, journal })
    expect(first.stopReason).toBe('approval-required')
    const second = await resumeModelLoop({
      tools,
      agent,
      model,
      state: first.state,
      decisions: { c3: { kind: 'allowed-once' } },
      journal,
    })
    expect(second.stopReason).toBe('done')
    const model2 = conversation(await records(journal)).filter((r) => !('callId' in r))
    expect(model2.map((r) => [r.type, 'stopReason' in r ? r.stopReason : 'resumed' in r ? r.resumed : ''])).toEqual([
      ['turn-started', false],
      ['model-reply', ''],
      ['turn-ended', 'approval-required'],
      ['turn-started', true],
      ['step-ended', ''],
      ['model-reply', ''],
      ['step-ended', ''],
      ['turn-ended', 'done'],
    ])
    // The resume ran only the write (the rest ran before the suspension).
    expect(model2[4]).toMatchObject({ step: 0, groups: [['c3']] })
  })

  it.each(['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as const)(
    '%s: the prompt and the model text are read from the format, without reasoning',
    async (format) => {
      const journal = join(dir, `${format}.jsonl`)
      const { tools, agent } = await session(journal, 'allow')
      const prompt = 'Look at <b>a.ts</b>, please.'
      const user = {
        'openai-chat': { role: 'user', content: prompt },
        'openai-responses': { type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] },
        anthropic: { role: 'user', content: [{ type: 'text', text: prompt }] },
        gemini: { role: 'user', parts: [{ text: prompt }] },
      }[format]
      const result = await runModelLoop({
        tools,
        agent,
        model: scriptedModel({
          format,
          turns: [
            {
              reasoning: 'secret thoughts',
              text: 'Looking <i>now</i>.',
              toolCalls: [{ id: 'c1', name: 'look', arguments: { path: 'a.ts' } }],
            },
            { reasoning: 'more thoughts', text: 'It is fine.' },
          ],
        }),
        messages: [user as never],
        journal,
      })
      expect(result.stopReason).toBe('done')
      const all = await records(journal)
      expect(all.find((r) => r.type === 'turn-started')).toMatchObject({ text: prompt, format })
      const replies = all.filter((r) => r.type === 'model-reply')
      expect(replies.map((r) => (r.type === 'model-reply' ? [r.text, r.calls] : []))).toEqual([
        ['Looking <i>now</i>.', [{ callId: 'c1', name: 'look' }]],
        ['It is fine.', []],
      ])
    },
  )

  it('cuts long model text to the bound and says how long it was', async () => {
    const journal = join(dir, 'long.jsonl')
    const { tools, agent } = await session(journal, 'allow')
    const long = `${'x'.repeat(MAX_MODEL_TEXT_CHARS - 1)}😀tail`
    await runModelLoop({
      tools,
      agent,
      model: scriptedModel({ turns: [long] }),
      messages: [{ role: 'user', content: long }],
      journal,
    })
    const all = await records(journal)
    const started = all.find((r) => r.type === 'turn-started')
    const reply = all.find((r) => r.type === 'model-reply')
    for (const r of [started, reply]) {
      expect(r).toMatchObject({ textChars: long.length })
      const text = (r as { text: string }).text
      // Cut before the emoji, never inside it.
      expect(text).toBe('x'.repeat(MAX_MODEL_TEXT_CHARS - 1))
    }
  })

  it('records into a store, and refuses a bad journal option with a path-qualified error', async () => {
    const appended: JournalRecord[] = []
    const store = { append: async (rs: readonly JournalRecord[]) => void appended.push(...rs) } as never
    const { tools, agent } = await session(join(dir, 'calls.jsonl'), 'allow')
    await runModelLoop({ tools, agent, model: scriptedModel({ turns: ['Hello.'] }), messages: MESSAGES, store })
    expect(appended.map((r) => r.type)).toEqual(['turn-started', 'model-reply', 'step-ended', 'turn-ended'])
    const options = { tools, agent, model: scriptedModel({ turns: ['x'] }), messages: MESSAGES }
    expect(() => runModelLoop({ ...options, journal: '' })).toThrow('runModelLoop(options).journal: expected')
    expect(() => runModelLoop({ ...options, journal: join(dir, 'j'), store })).toThrow(
      'runModelLoop(options).store: give either journal (a file) or store, not both',
    )
  })

  it('a journal that cannot be written never breaks the loop', async () => {
    const blocked = join(dir, 'not-a-dir')
    await writeFile(blocked, '')
    const { tools, agent } = await session(join(dir, 'calls.jsonl'), 'allow')
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on('warning', onWarning)
    try {
      const result = await runModelLoop({
        tools,
        agent,
        model: scriptedModel({ turns: ['Hello.'] }),
        messages: MESSAGES,
        journal: join(blocked, 'session.jsonl'),
      })
      expect(result.stopReason).toBe('done')
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings.some((w) => w.includes('could not append a turn-started record'))).toBe(true)
  })
})
