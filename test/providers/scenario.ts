// The tool set and checks every provider wire test shares: one turn exercising parallel and
// exclusive calls, an image, a throw, a denial, malformed JSON, a strict-mode null; and an abort.
import { expect } from 'vitest'
import type { ToolExecutionResult } from '../../src/contract/execution.js'
import { createToolRuntime } from '../../src/preset/create.js'
import type { ModelLoopResult } from '../../src/providers/model-loop.js'
import { createAgent } from '../../src/runtime/agent.js'
import { defineTool } from '../../src/schema/define-tool.js'
import { readTool, writeTool } from '../fixtures/file-tools.js'

/** A 1×1 transparent PNG. */
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

export async function scenario() {
  const { ctx, tools } = await createToolRuntime()
  const agent = createAgent(ctx, { id: 'agent' })
  const log: string[] = []
  const seenArgs: Record<string, unknown>[] = []
  let slowStart = (): void => {}
  const slowStarted = new Promise<void>((resolve) => {
    slowStart = resolve
  })
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

  tools.register(
    readTool(
      async ({ path }) => {
        log.push(`start:read:${path}`)
        await tick()
        await tick()
        log.push(`end:read:${path}`)
        return `contents of ${path}`
      },
      { concurrencySafe: true },
    ),
  )
  tools.register(
    writeTool(async ({ path, text }) => {
      log.push(`start:write:${path}`)
      await tick()
      log.push(`end:write:${path}`)
      return `wrote ${text.length} characters to ${path}`
    }),
  )
  tools.register(
    defineTool({
      name: 'snapshot',
      description: 'Take a screenshot.',
      parameters: {},
      output: {
        schema: { type: 'string' },
        render: (_a, v) => [
          { type: 'text', text: v },
          { type: 'image', mediaType: 'image/png', data: PNG },
        ],
      },
      execute: async () => 'a screenshot',
      isConcurrencySafe: () => true,
    }),
  )
  tools.register(
    defineTool({
      name: 'explode',
      description: 'Always fails.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async () => {
        throw new Error('kaboom')
      },
      isConcurrencySafe: () => true,
    }),
  )
  tools.register(
    defineTool({
      name: 'secret',
      description: 'Denied by policy.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async () => 'the secret',
      isConcurrencySafe: () => true,
    }),
  )
  tools.register(
    defineTool({
      name: 'search',
      description: 'Search, optionally limited.',
      parameters: {
        query: { type: 'string', required: true },
        limit: { type: 'integer', description: 'at most this many hits' },
      },
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async (args) => {
        seenArgs.push(args)
        return `searched ${args.query} with keys ${Object.keys(args).join(',')}`
      },
      isConcurrencySafe: () => true,
    }),
  )
  tools.register(
    defineTool({
      name: 'slow',
      description: 'Waits until cancelled.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async (_args, exec) => {
        slowStart()
        await new Promise<void>((resolve) => exec.signal.addEventListener('abort', () => resolve(), { once: true }))
        throw exec.signal.reason ?? new Error('aborted')
      },
    }),
  )
  tools.guard((exec) => (exec.name === 'secret' ? 'secrets are off-limits' : undefined))
  return { ctx, tools, agent, log, seenArgs, slowStarted }
}

/** The calls of the first scripted turn: [id, name, raw argument JSON text]. */
export const TURN_ONE: readonly (readonly [string, string, string])[] = [
  ['c1', 'read', '{"path":"a.txt"}'],
  ['c2', 'read', '{"path":"b.txt"}'],
  ['c3', 'write', '{"path":"out.txt","text":"hello"}'],
  ['c4', 'snapshot', '{}'],
  ['c5', 'explode', '{}'],
  ['c6', 'secret', '{}'],
  ['c7', 'read', '{"path": "broken'],
  ['c8', 'search', '{"query":"cats","limit":null}'],
]
/** The second turn: one more call, so the loop makes three requests. */
export const TURN_TWO: readonly (readonly [string, string, string])[] = [['c9', 'read', '{"path":"c.txt"}']]
/** The abort turn: an exclusive call that never finishes on its own, then one that never starts. */
export const TURN_ABORT: readonly (readonly [string, string, string])[] = [
  ['s1', 'slow', '{}'],
  ['s2', 'read', '{"path":"never.txt"}'],
]

function code(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined
}

/** Checks of the main turn common to all formats (the format test checks the wire shapes). */
export function checkMainTurn(
  run: ModelLoopResult,
  log: readonly string[],
  seenArgs: readonly Record<string, unknown>[],
  malformedArgumentsExpected = true,
): void {
  expect(run.stopReason).toBe('done')
  expect(run.steps).toHaveLength(3)
  const [one, two, three] = run.steps
  expect(one.results.map((r) => r.callId)).toEqual(TURN_ONE.map(([id]) => id))
  const byId = Object.fromEntries(one.results.map((r) => [r.callId, r.result]))
  expect(byId.c1).toMatchObject({ isError: false, value: 'contents of a.txt' })
  expect(byId.c2).toMatchObject({ isError: false, value: 'contents of b.txt' })
  expect(byId.c3).toMatchObject({ isError: false, value: 'wrote 5 characters to out.txt' })
  expect(byId.c4.content).toContainEqual({ type: 'image', mediaType: 'image/png', data: PNG })
  expect(code(byId.c5)).toBe('TOOL_ERROR')
  expect(byId.c5.isError && byId.c5.error.message).toBe('kaboom')
  expect(code(byId.c6)).toBe('TOOL_DENIED')
  if (malformedArgumentsExpected) {
    expect(code(byId.c7)).toBe('INVALID_ARGS')
    expect(byId.c7.isError && byId.c7.error.message).toMatch(/not valid JSON \(.+\): "\{\\"path\\": \\"broken"/)
  }
  // The strict-mode null for the optional `limit` came back as an absent key before validation.
  expect(byId.c8).toMatchObject({ isError: false, value: 'searched cats with keys query' })
  expect(seenArgs).toEqual([{ query: 'cats' }])
  // The exclusive write started only after both parallel reads ended, and they overlapped.
  expect(log.indexOf('start:read:b.txt')).toBeLessThan(log.indexOf('end:read:a.txt'))
  expect(log.indexOf('start:write:out.txt')).toBeGreaterThan(log.indexOf('end:read:b.txt'))
  expect(two.results.map((r) => [r.callId, r.result.isError])).toEqual([['c9', false]])
  expect(three.calls).toEqual([])
}

/** Checks of the aborted turn common to all formats. */
export function checkAbortTurn(run: ModelLoopResult): void {
  expect(run.stopReason).toBe('aborted')
  expect(run.steps).toHaveLength(1)
  const results = run.steps[0].results
  expect(results.map((r) => r.callId)).toEqual(['s1', 's2'])
  expect(results.map((r) => code(r.result))).toEqual(['ABORTED', 'ABORTED_BEFORE_DISPATCH'])
}
