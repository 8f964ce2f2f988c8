// A turn that needs approval, shared by the in-process tests and the child process that resumes it.
import { appendFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createAgent, createToolRuntime, Journal, SuspendingApproval } from '../../src/index.js'
import type { ModelReply, ModelRequest, ProviderModel } from '../../src/providers/index.js'
import type { Store } from '../../src/store/index.js'
import { readTool, writeTool } from '../fixtures/file-tools.js'

type Message = Record<string, unknown>

/**
 * A scripted OpenAI-chat model: first turn calls read(a) then write(b) and write(c); once every
 * call has its tool message it answers "done". `extra` lets a test append model-written text.
 */
export function scriptedModel(
  extra: {
    text?: string
    /** Appended to the written files' names (another turn, other arguments). */
    suffix?: string
  } = {},
): ProviderModel<'openai-chat'> & { requests: number } {
  const suffix = extra.suffix ?? ''
  const model = {
    format: 'openai-chat' as const,
    requests: 0,
    async generate(request: ModelRequest<'openai-chat'>): Promise<ModelReply<'openai-chat'>> {
      model.requests++
      const messages = request.messages as unknown as Message[]
      const assistant = messages.filter((m) => m.role === 'assistant').length
      if (assistant === 0) {
        const calls = [
          { callId: 'call_a', name: 'read', arguments: { path: 'a.txt' } },
          { callId: 'call_b', name: 'write', arguments: { path: `b${suffix}.txt`, text: 'B' } },
          { callId: 'call_c', name: 'write', arguments: { path: `c${suffix}.txt`, text: 'C' } },
        ]
        const reply = {
          role: 'assistant',
          content: extra.text ?? null,
          tool_calls: calls.map((c) => ({
            id: c.callId,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.arguments) },
          })),
        }
        return { messages: [reply], calls } as unknown as ModelReply<'openai-chat'>
      }
      return { messages: [{ role: 'assistant', content: 'done' }], calls: [] } as unknown as ModelReply<'openai-chat'>
    },
  }
  return model
}

export interface TurnOptions {
  /** Journal file, when the turn is journaled. */
  readonly journal?: string
  /** A store to journal to instead (issue 26). */
  readonly store?: Store
  /** Every tool body appends `<tool>:<path>` here (visible across processes). */
  readonly marker: string
  /** Crash on purpose: after the write body ran, or after the journal recorded its result. */
  readonly kill?: 'in-body' | 'after-journal'
  /**
   * A folder two processes share: a write body, once it ran, waits (bounded) until a body of the
   * other process ran too, so two resumes of one state are inside their tools at the same time.
   */
  readonly rendezvous?: string
}

/** Mark this process as inside a tool body, then wait until `count` processes have been. */
async function meet(folder: string, count: number): Promise<void> {
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, String(process.pid)), '')
  const deadline = Date.now() + 60_000
  while (readdirSync(folder).length < count && Date.now() < deadline) await sleep(10)
}

/** A runtime with read/write tools, writes needing approval through SuspendingApproval. */
export async function setupTurn(options: TurnOptions) {
  const { ctx, tools } = await createToolRuntime()
  if (options.journal !== undefined) await ctx.plugin(Journal, { path: options.journal })
  if (options.store !== undefined) await ctx.plugin(Journal, { store: options.store })
  await ctx.plugin(SuspendingApproval)
  const agent = createAgent(ctx, { id: 'agent-1' })
  tools.register(
    readTool(async ({ path }) => {
      appendFileSync(options.marker, `read:${path}\n`)
      return `contents of ${path}`
    }),
  )
  tools.register(
    writeTool(async ({ path }) => {
      appendFileSync(options.marker, `write:${path}\n`)
      if (options.kill === 'in-body') process.kill(process.pid, 'SIGKILL')
      if (options.rendezvous !== undefined) await meet(options.rendezvous, 2)
      return `wrote ${path}`
    }),
  )
  ctx.on('tools/pre-execute', async (exec, next) =>
    exec.name === 'write' ? { kind: 'ask', reason: 'writes change the workspace' } : next(),
  )
  if (options.kill === 'after-journal') {
    // Registered after the Journal, so the journal's line is written first.
    ctx.on('tools/result', (exec, result) => {
      if (exec.name === 'write' && !result.isError) process.kill(process.pid, 'SIGKILL')
    })
  }
  return { ctx, tools, agent }
}
