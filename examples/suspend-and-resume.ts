/**
 * Concept: approvals and the journal (docs/guide/approvals-and-journal.md). With
 * SuspendingApproval nothing waits for a person: the turn stops with the pending requests and a
 * plain-JSON state; later (in this process or another) the decisions resume it. The journal
 * records every call, approval and result as one JSON line.
 *
 *   npx tsx examples/suspend-and-resume.ts
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent, createToolRuntime, defineTool, Journal, readJournal, SuspendingApproval } from 'toolgate'
import { type ModelLoopState, resumeModelLoop, runModelLoop } from 'toolgate/providers'
import { scriptedModel } from 'toolgate/testing'

const dir = await mkdtemp(join(tmpdir(), 'toolgate-suspend-'))
const journal = join(dir, 'session.jsonl')

// #region setup
const { ctx, tools } = await createToolRuntime()
await ctx.plugin(Journal, { path: journal }) // one JSON line per call, approval and result
await ctx.plugin(SuspendingApproval) // an ask parks the call instead of waiting
tools.register(
  defineTool({
    name: 'transfer',
    description: 'Transfer money.',
    parameters: { to: { type: 'string', required: true }, cents: { type: 'integer', required: true } },
    output: { schema: { type: 'string' }, render: (_args, id) => [{ type: 'text', text: `transfer ${id} done` }] },
    needsApproval: ({ cents }) => cents > 10_000 && 'more than 100.00',
    execute: async ({ to, cents }) => `${to}-${cents}`,
  }),
)
const agent = createAgent(ctx, { id: 'treasurer' })
// A secret only the program holds (in practice read from a file outside the workspace): it seals
// the stored state, so an edited state is refused on resume.
const stateKey = randomBytes(32)
// #endregion setup

// #region suspend
const model = scriptedModel({
  turns: [
    {
      toolCalls: [
        { id: 'small', name: 'transfer', arguments: { to: 'ana', cents: 2_500 } },
        { id: 'large', name: 'transfer', arguments: { to: 'bob', cents: 250_000 } },
      ],
    },
    'Both transfers are settled.',
  ],
})
const turn = await runModelLoop({
  tools,
  agent,
  model,
  messages: [{ role: 'user', content: 'Pay Ana 25.00 and Bob 2,500.00.' }],
  stateKey, // turn.state.seal: an HMAC-SHA256 over the whole state
  journal, // the loop journals its side too: the prompt, the model's text, the turn's steps
})
console.log(`stop: ${turn.stopReason}`) // 'approval-required'
for (const request of turn.pending ?? []) console.log(`pending: ${request.callId} (${request.reason})`)
await writeFile(join(dir, 'state.json'), JSON.stringify(turn.state)) // plain JSON: store it anywhere
// #endregion suspend

// #region resume
// Later, maybe in another process with the same tools registered:
const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as ModelLoopState<'openai-chat'>
const done = await resumeModelLoop({
  state,
  decisions: { large: { kind: 'allowed-once' } }, // or { kind: 'denied', reason: '…' }
  tools,
  agent,
  model,
  journal, // a call that another resume, or an interrupted one, already ran is never run twice; the resumed turn is journaled
  stateKey, // only a state whose seal verifies is resumed
})
console.log(`stop: ${done.stopReason}; answer: ${done.messages.at(-1)?.content}`)

for await (const record of readJournal(journal)) console.log(`journal: ${record.type} ${record.callId}`)
// #endregion resume

await ctx.fiber.dispose()
await rm(dir, { recursive: true, force: true })
