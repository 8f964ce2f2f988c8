/**
 * A small coding agent (docs/guide/recipes/build-a-coding-agent.md, which shows every line below):
 * file tools confined to workspace/, bash in a bubblewrap sandbox, writes approved on the terminal,
 * deadlines, Code Mode and the journal, driven by a fake OpenAI server that plays a script.
 *
 *   mkdir workspace && printf 'echo "Hello, $NAME!"\n' > workspace/greet.sh
 *   npx tsx examples/coding-agent.ts        # answer o at the approval question
 */
// #region imports
import OpenAI from 'openai'
import {
  createAgent,
  createBashTool,
  createFsTools,
  createToolRuntime,
  Journal,
  readJournal,
  terminalApproval,
} from 'toolgate'
import { runModelLoop } from 'toolgate/providers'
import { openAIChatModel } from 'toolgate/providers/openai'
import { startFakeProvider } from 'toolgate/testing'

// #endregion imports

// #region runtime
await using runtime = await createToolRuntime({
  // Every ask goes to you on this terminal: allow once, always, or deny with a reason. `interactive`
  // asks even when stdin is a pipe (a script answering); without it, no terminal means no.
  approval: terminalApproval({ interactive: true }),
  defaultTimeoutMs: 60_000, // the deadline of every call whose tool declares none
})
const { ctx, tools } = runtime
await ctx.plugin(Journal, { path: 'session.jsonl' }) // one JSON line per call, approval and result
// #endregion runtime

// #region tools
// read_file, write_file, edit_file, glob, grep, list_dir: every path stays inside workspace/.
for (const tool of createFsTools({ root: 'workspace' })) tools.register(tool)
// bash runs in a bubblewrap sandbox: it can write only to workspace/, has no network, and every
// process it starts ends with the call.
tools.register(createBashTool({ cwd: 'workspace', sandbox: 'bwrap', timeoutMs: 30_000 }))
// Changing a file needs your yes.
ctx.on('tools/pre-execute', async (exec, next) =>
  exec.name === 'write_file' || exec.name === 'edit_file' ? { kind: 'ask', reason: 'it changes a file' } : next(),
)
const agent = createAgent(ctx, { id: 'coder' })
agent.ctx.tools.presentAs('both') // the model sees each tool and run_code (Code Mode)
// #endregion tools

// #region model
// A fake OpenAI server on 127.0.0.1 that plays a script of four turns, so this runs offline.
await using fake = await startFakeProvider({
  format: 'openai-chat',
  turns: [
    // 1. Look around: two calls in one turn (safe ones run in parallel).
    {
      toolCalls: [
        { name: 'list_dir', arguments: {} },
        { name: 'read_file', arguments: { path: 'greet.sh' } },
      ],
    },
    // 2. Fix the script: write_file asks you first.
    { toolCalls: [{ name: 'write_file', arguments: { path: 'greet.sh', content: 'echo "Hello, $1!"\n' } }] },
    // 3. Check the fix in Code Mode: one program runs bash for each name.
    {
      toolCalls: [
        {
          name: 'run_code',
          arguments: {
            description: 'Run the fixed script',
            code: `
              const lines = []
              for (const name of ['Ada', 'Grace']) {
                const run = await tools.bash({ command: 'bash greet.sh ' + name })
                lines.push(run.output.trim() + ' (sandbox: ' + run.sandbox + ')')
              }
              return lines`,
          },
        },
      ],
    },
    // 4. Answer.
    'Fixed: greet.sh now greets the name it is given (it read $NAME, which is never set).',
  ],
})
const client = new OpenAI({ baseURL: fake.url, apiKey: 'not-needed' })
const model = openAIChatModel({ client, model: 'gpt-5-mini' })
// #endregion model

// #region turn
// One line of at most 100 characters, for the console.
const clip = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > 100 ? `${line.slice(0, 99)}…` : line
}
const turn = await runModelLoop({
  tools,
  agent,
  model,
  messages: [
    { role: 'system', content: 'You are a coding agent. Look before you change a file; check what you changed.' },
    { role: 'user', content: 'greet.sh ignores its argument. Fix it and check.' },
  ],
  onEvent: (event) => {
    if (event.type === 'tool-start') console.log(`→ ${event.call.name} ${clip(JSON.stringify(event.call.arguments))}`)
    if (event.type === 'tool-result') {
      const { call, result } = event
      // What the model reads back: text blocks (a tool may also return images, audio, resources).
      const text = result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join(' ')
      console.log(`← ${call.name}${result.isError ? ` ${result.error.info?.code}` : ''}: ${clip(text)}`)
    }
  },
})
console.log(`stop: ${turn.stopReason}`)
console.log(`answer: ${turn.messages.at(-1)?.content}`)
// #endregion turn

// #region journal
// What happened, from the journal: each answer to an ask, and each call's result.
for await (const record of readJournal('session.jsonl')) {
  if (record.type === 'approval-answered') console.log(`journal: ${record.toolName} ${record.outcome.kind}`)
  if (record.type === 'result') {
    const status = record.result.isError ? record.result.error.info?.code : 'ok'
    const caller = record.parentCallId === null ? '' : ` (called by ${record.parentCallId})`
    console.log(`journal: ${record.toolName} ${status}${caller}`)
  }
}
// #endregion journal
