/**
 * A real agent: any OpenAI-compatible model (OpenAI, vLLM, llama.cpp, Ollama, …) working in a
 * directory with toolgate's file tools. Reads run in parallel; writes and edits ask on the
 * terminal first (and are refused when there is no terminal).
 *
 *   OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=unused MODEL=qwen3:8b \
 *     npx tsx examples/openai-agent.ts "Summarise README.md" ./some/dir
 *
 * OPENAI_BASE_URL defaults to OpenAI's API; OPENAI_API_KEY and MODEL are required. The first
 * argument is the task, the second the workspace (default: the current directory).
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import OpenAI from 'openai'
import { createAgent, createFsTools, createToolRuntime, TerminalApproval } from 'toolgate'
import { type ModelLoopResult, runModelLoop } from 'toolgate/providers'
import { openAIChatModel } from 'toolgate/providers/openai'

export interface AgentOptions {
  readonly client: OpenAI
  readonly model: string
  readonly task: string
  /** The directory the file tools may touch. */
  readonly root: string
  /** Where progress goes. Default `process.stdout`. */
  readonly output?: NodeJS.WritableStream
  readonly signal?: AbortSignal
}

const SYSTEM = [
  'You are a careful assistant working in a directory through file tools.',
  'Use list_dir, glob, grep and read_file to look before you answer; paths are relative to the directory.',
  'Answer briefly once you know.',
].join(' ')

/** One agent turn: the model works with the file tools until it answers. */
export async function runAgent(options: AgentOptions): Promise<ModelLoopResult<'openai-chat'>> {
  const out = options.output ?? process.stdout
  const { ctx, tools } = await createToolRuntime()
  ctx.plugin(TerminalApproval, {})
  // Changes need a yes on the terminal; reading does not.
  ctx.on('tools/pre-execute', async (exec, next) =>
    exec.name === 'write_file' || exec.name === 'edit_file' ? { kind: 'ask', reason: 'it changes files' } : next(),
  )
  for (const tool of createFsTools({ root: options.root })) tools.register(tool)
  const agent = createAgent(ctx, { id: 'openai-agent' })
  const run = await runModelLoop({
    tools,
    agent,
    model: openAIChatModel({ client: options.client, model: options.model }),
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: options.task },
    ],
    signal: options.signal,
    onEvent: (event) => {
      if (event.type === 'model-request') out.write(`… asking the model (step ${event.step + 1})\n`)
      if (event.type === 'tool-start') out.write(`→ ${event.call.name} ${JSON.stringify(event.call.arguments)}\n`)
      if (event.type === 'tool-result') {
        const first = event.result.content.find((block) => block.type === 'text')?.text.split('\n')[0] ?? ''
        out.write(`${event.result.isError ? '✗' : '✓'} ${event.call.name}: ${JSON.stringify(first.slice(0, 100))}\n`)
      }
    },
  })
  const last = run.messages.at(-1)
  if (last?.role === 'assistant' && typeof last.content === 'string') out.write(`\n${last.content}\n`)
  out.write(`\n(${run.stopReason} after ${run.steps.length} model requests)\n`)
  return run
}

async function main(): Promise<void> {
  const { OPENAI_BASE_URL, OPENAI_API_KEY, MODEL } = process.env
  if (!OPENAI_API_KEY || !MODEL) {
    process.stderr.write('Set OPENAI_API_KEY and MODEL (and OPENAI_BASE_URL for a non-OpenAI server).\n')
    process.exitCode = 2
    return
  }
  const client = new OpenAI({ baseURL: OPENAI_BASE_URL || undefined, apiKey: OPENAI_API_KEY })
  const task = process.argv[2] ?? 'What is in this directory? Summarise the most important file.'
  const controller = new AbortController()
  process.once('SIGINT', () => controller.abort())
  await runAgent({ client, model: MODEL, task, root: resolve(process.argv[3] ?? '.'), signal: controller.signal })
  process.exit()
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
