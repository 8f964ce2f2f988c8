// Issue 40, item 2, and issue 35, item 4 (R-EXEC-4, R-CODE-2, R-SCHED-3), on the stdio face: a
// Code Mode program kept for an MCP 2026-07-28 client over stdio, with no store, in the process's
// memory. The built CLI as a real process; the official SDK v2 client pinned to 2026-07-28 runs a
// program A, B (needs approval), C: its run_code call answers input-required, the client's retry
// carries the answer, and the program resumes from its replay log, each sub-call run once, with the
// result of an uninterrupted run. A declined approval rejects inside the program. On raw 2026 lines:
// a tampered state and a replayed one are refused and run nothing, and the owner's retry still works.
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ABC_CODE, MARKER_UPSTREAM } from '../store/program-gateways.js'
import { tempDir, writeConfig } from './helpers.js'
import { type AskAnswer, modernStdioClient } from './modern-client.js'
import { APPROVAL_KEY } from './raw-modern-call.js'
import { rawStdioServe } from './raw-stdio-serve.js'
import { stopChildren } from './spawn-ready.js'

/** A loaded machine may take its time; every wait is for an event, bounded by this. */
const BOUND_MS = 60_000

let dir: string
let cleanup: () => Promise<void>
let marker: string
let config: string
const children: ChildProcessWithoutNullStreams[] = []

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  marker = path.join(dir, 'marker')
  writeFileSync(marker, '')
  config = await writeConfig(dir, {
    files: false,
    mode: 'code',
    servers: { m: { command: process.execPath, args: [MARKER_UPSTREAM, marker], prefix: '' } },
    policy: { ask: ['guarded'] },
  })
})

afterAll(async () => {
  await stopChildren(children)
  await cleanup()
})

const ran = () => readFileSync(marker, 'utf8').split('\n').filter(Boolean)

/**
 * A v2 client pinned to 2026-07-28 over stdio to `serve --config configPath`, answering approvals
 * with `answer`; what the gateway logs goes to `onStderr`.
 */
const modernClient = (
  configPath: string,
  answer: AskAnswer,
  questions: string[],
  onStderr?: (text: string) => void,
): Promise<Client> =>
  modernStdioClient(['--config', configPath], {
    answer: (params) => {
      questions.push(String(params.message))
      return answer
    },
    onStderr,
  })

const textOf = (value: unknown) => JSON.stringify(value)
const accept = { action: 'accept', content: { approve: true } }

describe('serve over stdio keeps a 2026-07-28 client’s run_code program in memory (issue 40, item 2; issue 35, item 4)', {
  timeout: 4 * BOUND_MS,
}, () => {
  it('the log says a program kept in memory waits for its client, not for a viewer there is none of', async () => {
    const before = ran().length
    let said = ''
    const client = await modernClient(config, accept, [], (text) => {
      said += text
    })
    try {
      const result = (await client.callTool({
        name: 'run_code',
        arguments: {
          code: ABC_CODE.replace('n: 1', 'n: 91').replace('n: 2', 'n: 92').replace('n: 3', 'n: 93'),
          description: 'log',
        },
      })) as { isError?: boolean }
      expect(result.isError, textOf(result)).not.toBe(true)
    } finally {
      await client.close()
    }
    expect(ran().slice(before)).toEqual(['step:91', 'guarded:92', 'step:93'])
    expect(said).toMatch(
      /a run_code program waits for its client's answer \(a retry of its run_code call\) \(turn gateway-program:/,
    )
    expect(said).not.toMatch(/viewer/)
  })

  it('a v2 client: A, B (approved on the retry), C each run once; the result is an uninterrupted run’s', async () => {
    const before = ran().length
    const questions: string[] = []
    const client = await modernClient(config, accept, questions)
    let result: { isError?: boolean; content?: unknown; structuredContent?: unknown }
    try {
      expect(client.getProtocolEra()).toBe('modern')
      result = (await client.callTool({
        name: 'run_code',
        arguments: { code: ABC_CODE, description: 'a, b, c' },
      })) as never
    } finally {
      await client.close()
    }
    expect(result.isError, textOf(result)).not.toBe(true)
    expect(questions).toHaveLength(1)
    expect(questions[0]).toContain('Allow the call to guarded?')
    expect(ran().slice(before)).toEqual(['step:1', 'guarded:2', 'step:3'])

    // The same program on a gateway that asks nothing: the same result.
    const plainMarker = path.join(dir, 'plain-marker')
    writeFileSync(plainMarker, '')
    const plainConfig = await writeConfig(
      dir,
      {
        files: false,
        mode: 'code',
        servers: { m: { command: process.execPath, args: [MARKER_UPSTREAM, plainMarker], prefix: '' } },
      },
      'plain.json',
    )
    const plain = await modernClient(plainConfig, accept, questions)
    let uninterrupted: { content?: unknown; structuredContent?: unknown }
    try {
      uninterrupted = (await plain.callTool({
        name: 'run_code',
        arguments: { code: ABC_CODE, description: 'a, b, c' },
      })) as never
    } finally {
      await plain.close()
    }
    expect(questions).toHaveLength(1)
    expect({ content: result.content, structuredContent: result.structuredContent }).toEqual({
      content: uninterrupted.content,
      structuredContent: uninterrupted.structuredContent,
    })
  })

  it('a declined approval rejects inside the program; B never runs, C does', async () => {
    const before = ran().length
    const questions: string[] = []
    const client = await modernClient(config, { action: 'decline' }, questions)
    let result: unknown
    try {
      result = await client.callTool({
        name: 'run_code',
        arguments: {
          code: [
            'const a = await tools.step({ n: 41 })',
            'let b',
            'try { b = await tools.guarded({ n: 42 }) } catch (error) { b = "refused: " + error.message }',
            'const c = await tools.step({ n: 43 })',
            'return { a, b, c }',
          ].join('\n'),
          description: 'declined',
        },
      })
    } finally {
      await client.close()
    }
    expect((result as { isError?: boolean }).isError, textOf(result)).not.toBe(true)
    expect(questions).toHaveLength(1)
    expect(textOf(result)).toMatch(/refused: .*declined/)
    expect(ran().slice(before)).toEqual(['step:41', 'step:43'])
  })

  it('a tampered state and a replayed one are refused and run nothing; the owner’s retry resumes the program once', async () => {
    const args = { code: ABC_CODE.replace('n: 1', 'n: 61').replace('n: 3 ', 'n: 63 '), description: 'hostile' }
    const before = ran().length
    const serve = rawStdioServe(['--config', config], children, { boundMs: BOUND_MS })
    expect((await serve.request('server/discover', {})).error).toBeUndefined()
    const call = (retry?: { state: string; answers: Record<string, unknown> }) =>
      serve.request('tools/call', {
        name: 'run_code',
        arguments: args,
        ...(retry ? { requestState: retry.state, inputResponses: retry.answers } : {}),
      })
    const first = await call()
    expect(first.result?.resultType, textOf(first)).toBe('input_required')
    expect(first.result?.inputRequests?.[APPROVAL_KEY]?.params?.message).toContain('Allow the call to guarded?')
    const state = first.result?.requestState as string
    expect(ran().slice(before)).toEqual(['step:61'])

    // The state pointed at another kept program, its seal kept.
    const [name, version, body, mac] = state.split('.')
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>
    const forged = Buffer.from(
      JSON.stringify({ ...decoded, kept: { turn: 'gateway-program:other', calls: ['x'] } }),
    ).toString('base64url')
    const tampered = await call({ state: `${name}.${version}.${forged}.${mac}`, answers: { [APPROVAL_KEY]: accept } })
    expect(tampered.error?.code).toBe(-32602)
    expect(tampered.error?.message).toMatch(/seal does not verify/)
    // A truncated seal is refused too.
    const truncated = await call({
      state: `${name}.${version}.${body}.${mac.slice(0, -4)}`,
      answers: { [APPROVAL_KEY]: accept },
    })
    expect(truncated.error?.code).toBe(-32602)
    expect(ran().slice(before)).toEqual(['step:61'])

    // Refusals spend nothing and decide nothing: the owner's retry resumes the program, once.
    const retried = await call({ state, answers: { [APPROVAL_KEY]: accept } })
    expect(retried.error, textOf(retried)).toBeUndefined()
    expect(retried.result?.isError, textOf(retried)).not.toBe(true)
    for (const part of ['step 61 done', 'guarded 2 done', 'step 63 done']) expect(textOf(retried)).toContain(part)
    expect(ran().slice(before)).toEqual(['step:61', 'guarded:2', 'step:63'])

    const replayed = await call({ state, answers: { [APPROVAL_KEY]: accept } })
    expect(replayed.error?.code).toBe(-32602)
    expect(replayed.error?.message).toMatch(/already been used/)
    expect(ran().slice(before)).toEqual(['step:61', 'guarded:2', 'step:63'])
  })
})
