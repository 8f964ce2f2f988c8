// Issue 23 item 1 (library part): connectMcpServer declares exactly the client capabilities whose
// handlers it is given (elicitation, sampling, roots), answers the server's requests through them,
// fills elicitation defaults (SEP-1034), turns a failing or malformed handler into an error
// response, passes cancellation on, and keeps all of it across reconnects. The upstream is a real
// SDK server over stdio that asks its client and reports what it saw.
import path from 'node:path'
import { type CreateMessageResultWithTools, McpError } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createToolRuntime } from '../../src/index.js'
import { type ConnectMcpServerOptions, connectMcpServer, type McpConnection } from '../../src/mcp/index.js'

const ASKER = path.resolve(import.meta.dirname, '../fixtures/capability-server.mjs')
const METHOD_NOT_FOUND = -32601
const INTERNAL_ERROR = -32603

interface Report {
  capabilities: Record<string, unknown> | null
  result?: Record<string, unknown>
  error?: { code: number | null; message: string }
}

let open: McpConnection[] = []
afterEach(async () => {
  await Promise.all(open.map((connection) => connection.close()))
  open = []
})

async function connect(options: ConnectMcpServerOptions) {
  const runtime = await createToolRuntime()
  const connection = await connectMcpServer(runtime.ctx, { command: process.execPath, args: [ASKER] }, options)
  open.push(connection)
  const ask = async (args: {
    kind: 'elicit' | 'sample' | 'sampleTools' | 'roots'
    raw?: boolean
    timeoutMs?: number
  }) => {
    const result = await runtime.tools.execute({
      callId: `c-${args.kind}`,
      name: 'ask',
      arguments: args,
      signal: new AbortController().signal,
    })
    expect(result.isError).toBe(false)
    const value = result.value as { content: { type: string; text: string }[] }
    return JSON.parse(value.content[0].text) as Report
  }
  return { runtime, connection, ask }
}

const sampled = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'fake-model' } as const
const rootList = { roots: [{ uri: 'file:///work/project', name: 'project' }] }

describe('client capabilities (issue 23 item 1)', () => {
  it('declares the given handlers, answers through them, fills elicitation defaults', async () => {
    const seen: { kind: string; params: unknown; signal: boolean }[] = []
    const { ask } = await connect({
      elicitation: (params, { signal }) => {
        seen.push({ kind: 'elicit', params, signal: signal instanceof AbortSignal })
        return { action: 'accept', content: { name: 'Ada', age: 36 } }
      },
      sampling: async (params, { signal }) => {
        seen.push({ kind: 'sample', params, signal: signal instanceof AbortSignal })
        return sampled
      },
      roots: (params, { signal }) => {
        seen.push({ kind: 'roots', params, signal: signal instanceof AbortSignal })
        return rootList
      },
    })
    const elicit = await ask({ kind: 'elicit' })
    expect(elicit.capabilities).toEqual({ elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } })
    // color and subscribed were left out: their defaults; age was given: kept.
    expect(elicit.result).toEqual({
      action: 'accept',
      content: { name: 'Ada', age: 36, color: 'green', subscribed: true },
    })
    expect((await ask({ kind: 'sample' })).result).toEqual(sampled)
    expect((await ask({ kind: 'roots' })).result).toEqual(rootList)
    expect(seen.map((entry) => [entry.kind, entry.signal])).toEqual([
      ['elicit', true],
      ['sample', true],
      ['roots', true],
    ])
    expect(seen[0].params).toMatchObject({ message: 'Who are you?', requestedSchema: { required: ['name'] } })
    expect(seen[1].params).toMatchObject({ maxTokens: 10 })
  })

  it('a decline passes through without defaults', async () => {
    const { ask } = await connect({ elicitation: () => ({ action: 'decline' }) })
    expect((await ask({ kind: 'elicit' })).result).toEqual({ action: 'decline' })
  })

  it('declares nothing without handlers; the requests fail with method-not-found', async () => {
    const { ask } = await connect({})
    for (const kind of ['elicit', 'sample', 'roots'] as const) {
      const report = await ask({ kind, raw: true })
      expect(report.capabilities).toEqual({})
      expect(report.error?.code).toBe(METHOD_NOT_FOUND)
    }
  })

  it('declares only the capabilities whose handlers are given', async () => {
    const { ask } = await connect({ roots: () => rootList })
    const roots = await ask({ kind: 'roots' })
    expect(roots.capabilities).toEqual({ roots: { listChanged: true } })
    expect(roots.result).toEqual(rootList)
    expect((await ask({ kind: 'sample', raw: true })).error?.code).toBe(METHOD_NOT_FOUND)
  })

  it('samplingTools declares sampling.tools: requests that offer tools reach the handler, tool uses come back', async () => {
    const offered: unknown[] = []
    const toolUse: CreateMessageResultWithTools = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'use-1', name: 'weather', input: { city: 'Paris' } }],
      model: 'fake-model',
      stopReason: 'toolUse',
    }
    const { ask } = await connect({
      sampling: (params) => {
        offered.push(params.tools)
        return params.tools === undefined ? sampled : toolUse
      },
      samplingTools: true,
    })
    const report = await ask({ kind: 'sampleTools' })
    expect(report.capabilities).toEqual({ sampling: { tools: {} } })
    expect(report.result).toEqual(toolUse)
    // A request without tools is answered by the same handler.
    expect((await ask({ kind: 'sample' })).result).toEqual(sampled)
    expect(offered).toEqual([[expect.objectContaining({ name: 'weather' })], undefined])
  })

  it('without samplingTools the server may not offer tools', async () => {
    const seen: unknown[] = []
    const { ask } = await connect({
      sampling: (params) => {
        seen.push(params)
        return sampled
      },
    })
    const report = await ask({ kind: 'sampleTools' })
    expect(report.capabilities).toEqual({ sampling: {} })
    expect(report.error?.message).toMatch(/sampling tools/)
    expect(seen).toEqual([])
  })

  it('samplingTools that is not a boolean, or without a sampling handler, is a ConfigError', async () => {
    const runtime = await createToolRuntime()
    const server = { command: process.execPath, args: [ASKER] }
    await expect(
      connectMcpServer(runtime.ctx, server, { sampling: () => sampled, samplingTools: 'yes' as never }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/options\)\.samplingTools.*expected true or false/),
    })
    await expect(connectMcpServer(runtime.ctx, server, { samplingTools: true })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/options\)\.samplingTools.*needs a sampling handler/),
    })
  })

  it('a handler that is not a function is a ConfigError naming the option', async () => {
    const runtime = await createToolRuntime()
    await expect(
      connectMcpServer(runtime.ctx, { command: process.execPath, args: [ASKER] }, { sampling: 'yes' as never }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/connectMcpServer\(ctx, server, options\)\.sampling.*expected a function/),
    })
  })

  it('a handler that throws gives the server an error response, with its message', async () => {
    const { ask } = await connect({
      elicitation: () => {
        throw new Error('the user closed the dialog')
      },
      sampling: async () => Promise.reject('no model configured'),
      roots: () => {
        throw new McpError(-32050, 'no roots today')
      },
    })
    const elicit = await ask({ kind: 'elicit' })
    expect(elicit.error).toEqual({ code: INTERNAL_ERROR, message: expect.stringMatching(/the user closed the dialog/) })
    const sample = await ask({ kind: 'sample' })
    expect(sample.error).toEqual({
      code: INTERNAL_ERROR,
      message: expect.stringMatching(/the sampling handler of MCP client "node" failed: no model configured/),
    })
    // An error with a code keeps the code the handler chose. (Not -32002: the SDK v2 Client sends
    // that one as -32602, the code MCP 2026-07-28 gives "resource not found".)
    const roots = await ask({ kind: 'roots' })
    expect(roots.error).toEqual({ code: -32050, message: expect.stringMatching(/no roots today/) })
  })

  it('a malformed handler result gives the server an error that says what is wrong', async () => {
    const { ask } = await connect({
      // Deliberately wrong shapes, as an untyped caller could return them.
      elicitation: () => ({ action: 'maybe' }) as never,
      sampling: () => ({ role: 'assistant', content: { type: 'text' }, model: 'm' }) as never,
      roots: () => ({ roots: [{ name: 'no uri' }] }) as never,
    })
    const elicit = await ask({ kind: 'elicit' })
    expect(elicit.error?.code).toBe(INTERNAL_ERROR)
    expect(elicit.error?.message).toMatch(/elicitation handler .* answered an invalid result: action: /)
    const sample = await ask({ kind: 'sample' })
    expect(sample.error?.message).toMatch(/sampling handler .* answered an invalid result: content/)
    const roots = await ask({ kind: 'roots' })
    expect(roots.error?.message).toMatch(/roots handler .* answered an invalid result: roots\.0\.uri: /)
    // The connection is still good after all three.
    expect((await ask({ kind: 'elicit' })).error?.code).toBe(INTERNAL_ERROR)
  })

  it("the server's cancellation reaches the handler through its signal", async () => {
    let aborted!: () => void
    const abortSeen = new Promise<void>((resolve) => {
      aborted = resolve
    })
    let calls = 0
    const { ask } = await connect({
      // The first request is answered. The second never is by itself: the server gives up after its
      // timeout and cancels it. (The first is answered because the SDK 1.32.2 ignores a cancellation
      // of request id 0, which is falsy to its check.)
      elicitation: (_params, { signal }) =>
        calls++ === 0
          ? { action: 'decline' }
          : new Promise((_resolve, reject) => {
              signal.addEventListener('abort', () => {
                aborted()
                reject(new Error('cancelled'))
              })
            }),
    })
    expect((await ask({ kind: 'elicit' })).result).toEqual({ action: 'decline' })
    const report = await ask({ kind: 'elicit', timeoutMs: 300 })
    expect(report.error?.message).toMatch(/timed out/i)
    await abortSeen
  })

  it('the handlers survive a reconnect', async () => {
    const { runtime } = await connect({ roots: () => rootList })
    const pid = await runtime.tools.execute({
      callId: 'c-pid',
      name: 'pid',
      arguments: {},
      signal: new AbortController().signal,
    })
    const first = Number((pid.value as { content: { text: string }[] }).content[0].text)
    process.kill(first)
    // The call after the crash reconnects (a fresh SDK client) and must still declare and answer roots.
    let report: Report | undefined
    for (let attempt = 0; attempt < 50 && report === undefined; attempt++) {
      const result = await runtime.tools.execute({
        callId: `c-roots-${attempt}`,
        name: 'ask',
        arguments: { kind: 'roots' },
        signal: new AbortController().signal,
      })
      if (!result.isError) report = JSON.parse((result.value as { content: { text: string }[] }).content[0].text)
      else await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(report).toEqual({ capabilities: { roots: { listChanged: true } }, result: rootList })
    const again = await runtime.tools.execute({
      callId: 'c-pid2',
      name: 'pid',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(Number((again.value as { content: { text: string }[] }).content[0].text)).not.toBe(first)
  })
})
