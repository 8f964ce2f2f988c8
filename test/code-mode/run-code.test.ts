import type { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/constants.js'
import { CodeRunFailedError } from '../../src/code-mode/errors.js'
import type { CodeDispatchLog } from '../../src/code-mode/events.js'
import {
  type CodeModeHost,
  createRunCodeDefinition,
  RUN_CODE_OUTPUT_SCHEMA,
  RUN_CODE_PARAMETERS,
  renderRunCodeContent,
} from '../../src/code-mode/run-code.js'
import type { ContentBlock, UserMessage } from '../../src/contract/content.js'
import type {
  Agent,
  ToolExecutionInput,
  ToolExecutionMode,
  ToolExecutionResult,
  ToolExecutionToken,
  ToolRunContext,
} from '../../src/contract/execution.js'
import type { JsonValue } from '../../src/contract/json-value.js'
import { ToolAbortedError } from '../../src/runtime/errors.js'
import { assertSupportedJsonSchema } from '../../src/schema/assert.js'
import { ToolArgsError } from '../../src/schema/errors.js'
import { failOnUnhandledRejections, makeRuntime, RUNTIME_KINDS, trackRun } from './runtimes.js'

failOnUnhandledRejections()

describe.each(RUNTIME_KINDS)('%s runtime', (kind) => {
  const sandbox = makeRuntime(kind, { cpuTimeMs: 1_000 })
  const agent: Agent = { id: 'agent-7', ctx: {} as Context }

  const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

  function ok(value: JsonValue, extra: Partial<ToolExecutionResult> = {}): ToolExecutionResult {
    return {
      isError: false,
      value,
      content: [{ type: 'text', text: JSON.stringify(value) }],
      ...extra,
    } as ToolExecutionResult
  }
  function fail(message: string, extra: Partial<ToolExecutionResult> = {}): ToolExecutionResult {
    return {
      isError: true,
      error: { message },
      content: [{ type: 'text', text: message }],
      ...extra,
    } as ToolExecutionResult
  }

  interface FakeHost extends CodeModeHost {
    readonly inputs: ToolExecutionInput[]
    readonly logs: CodeDispatchLog[]
    /** `start <id>` / `end <id>` in host order. */
    readonly events: string[]
    readonly maxActive: () => number
    readonly active: () => number
  }

  function fakeHost(
    behave: (input: ToolExecutionInput) => Promise<ToolExecutionResult> | ToolExecutionResult = (input) =>
      ok({ tool: input.name, args: input.arguments as JsonValue }),
    modes: Record<string, ToolExecutionMode['kind']> = {},
  ): FakeHost {
    const inputs: ToolExecutionInput[] = []
    const logs: CodeDispatchLog[] = []
    const events: string[] = []
    let active = 0
    let maxActive = 0
    return {
      inputs,
      logs,
      events,
      maxActive: () => maxActive,
      active: () => active,
      executionMode: (input) => ({ kind: modes[input.name] ?? 'parallel' }),
      async execute(input) {
        inputs.push(input)
        active++
        maxActive = Math.max(maxActive, active)
        events.push(`start ${input.callId}`)
        try {
          return await behave(input)
        } finally {
          active--
          events.push(`end ${input.callId}`)
        }
      },
      async logDispatch(log) {
        logs.push(log)
      },
    }
  }

  interface FakeExec extends ToolRunContext {
    readonly deferred: UserMessage[]
    readonly concluded: () => boolean
    readonly controller: AbortController
  }

  function fakeExec(code: string, callId = 'call-1'): FakeExec {
    const controller = new AbortController()
    const deferred: UserMessage[] = []
    let concluded = false
    return {
      callId,
      rootCallId: 'root-1',
      parentCallId: null,
      name: RUN_CODE_NAME,
      arguments: { code, description: 'test program' },
      agent,
      token: Symbol('outer') as ToolExecutionToken,
      signal: controller.signal,
      controller,
      deferred,
      concluded: () => concluded,
      progress: () => {},
      deferContext: (message) => {
        deferred.push(message)
      },
      concludeTurn: () => {
        concluded = true
      },
    }
  }

  async function runCode(
    host: CodeModeHost,
    code: string,
    options: { maxParallelSubCalls?: number } = {},
    exec = fakeExec(code),
  ) {
    const definition = createRunCodeDefinition(host, { runtime: sandbox, ...options })
    const clean = trackRun(kind, sandbox)
    try {
      return await definition.execute({ code, description: 'test program' }, exec)
    } finally {
      clean()
    }
  }

  describe('R-CODE-1 run_code definition', () => {
    it('declares the reserved name, the model-facing parameters and a supported output schema', () => {
      const definition = createRunCodeDefinition(fakeHost())
      expect(definition.name).toBe('run_code')
      expect(definition.parameters).toEqual({
        type: 'object',
        properties: {
          code: {
            type: 'string',
            description:
              'The body of an async TypeScript function; top-level await and return work. Call tools as tools.<name>(args).',
          },
          description: {
            type: 'string',
            description: 'A five-to-ten-word summary of what this program does, shown in the UI.',
          },
        },
        required: ['code', 'description'],
        additionalProperties: false,
      })
      expect(() => assertSupportedJsonSchema(RUN_CODE_OUTPUT_SCHEMA)).not.toThrow()
      expect(() => assertSupportedJsonSchema(RUN_CODE_PARAMETERS)).not.toThrow()
      expect(definition.isConcurrencySafe).toBeUndefined()
      expect(definition.presentCall?.({ code: 'return 1', description: 'Add numbers' })).toEqual({
        card: 'generic',
        title: 'Add numbers',
        kind: 'execute',
        content: [{ type: 'text', text: 'return 1' }],
      })
      expect(() => createRunCodeDefinition(fakeHost(), { maxParallelSubCalls: 0 })).toThrow(/maxParallelSubCalls/)
    })

    it('R-CODE-3 renders logs and the JSON result as text content', () => {
      expect(renderRunCodeContent({ result: { a: 1 }, logs: ['one', 'two'] })).toEqual([
        { type: 'text', text: 'Logs:\none\ntwo\n\nResult:\n{\n  "a": 1\n}' },
      ])
      expect(renderRunCodeContent({ result: null, logs: [] })).toEqual([{ type: 'text', text: 'Result:\nnull' }])
    })

    it('R-DSL-7 rejects invalid arguments with ToolArgsError before running anything', async () => {
      const host = fakeHost()
      const definition = createRunCodeDefinition(host, { runtime: sandbox })
      const exec = fakeExec('')
      await expect(definition.execute({ code: 1, description: 'x' }, exec)).rejects.toBeInstanceOf(ToolArgsError)
      await expect(definition.execute({ code: 'return 1' }, exec)).rejects.toThrow(/description/)
      await expect(definition.execute({ code: 'return 1', description: 'x', extra: 1 }, exec)).rejects.toThrow(/extra/)
      expect(host.inputs).toEqual([])
    })
  })

  describe('R-CODE-2 run_code sub-dispatch identity', () => {
    it('dispatches each binding with <callId>:code:<n>, the outer token as parent, the same agent and root call', async () => {
      const host = fakeHost()
      const exec = fakeExec('')
      const value = await runCode(
        host,
        `
      const first = await tools.read_file({ path: '/a' })
      const [second, third] = await Promise.all([tools.grep({ q: 'x' }), tools['odd-name']({})])
      return [first, second, third]
    `,
        {},
        exec,
      )
      expect(value).toEqual({
        result: [
          { tool: 'read_file', args: { path: '/a' } },
          { tool: 'grep', args: { q: 'x' } },
          { tool: 'odd-name', args: {} },
        ],
        logs: [],
      })
      expect(host.inputs.map((input) => [input.callId, input.name])).toEqual([
        ['call-1:code:1', 'read_file'],
        ['call-1:code:2', 'grep'],
        ['call-1:code:3', 'odd-name'],
      ])
      for (const input of host.inputs) {
        expect(input.parent).toBe(exec.token)
        expect(input.agent).toBe(agent)
        expect(input.rootCallId).toBe('root-1')
        expect(input.signal).not.toBe(exec.signal)
        // The per-run signal is aborted once the run settled.
        expect(input.signal.aborted).toBe(true)
      }
      expect(exec.signal.aborted).toBe(false)
    })

    it('logs every settled sub-dispatch before the program sees its outcome', async () => {
      const host = fakeHost((input) => (input.name === 'bad' ? fail('no such thing') : ok(1)))
      const exec = fakeExec('')
      const seen: number[] = []
      const logging: CodeModeHost = {
        ...host,
        async logDispatch(log) {
          seen.push(host.logs.length)
          await host.logDispatch(log)
        },
      }
      await runCode(logging, 'await tools.good({}); try { await tools.bad({}) } catch {} ; return 1', {}, exec)
      expect(host.logs).toEqual([
        {
          exec,
          agent,
          subCallId: 'call-1:code:1',
          name: 'good',
          isError: false,
          content: [{ type: 'text', text: '1' }],
        },
        {
          exec,
          agent,
          subCallId: 'call-1:code:2',
          name: 'bad',
          isError: true,
          content: [{ type: 'text', text: 'no such thing' }],
        },
      ])
      expect(seen).toEqual([0, 1])
    })

    it('dispatches unknown names anyway; the pipeline failure becomes a ToolCallError with only toolName and message', async () => {
      const host = fakeHost((input) =>
        input.name === 'nope'
          ? {
              isError: true,
              error: { message: 'Unknown tool "nope"', info: { name: 'ToolNotFoundError', code: 'UNKNOWN_TOOL' } },
              content: [{ type: 'text', text: 'Unknown tool "nope"' }],
            }
          : ok(null),
      )
      const value = await runCode(
        host,
        `try { await tools.nope({}) } catch (e) {
         return { own: Object.getOwnPropertyNames(e), name: e.name, toolName: e.toolName, message: e.message, is: e instanceof ToolCallError }
       }`,
      )
      expect(value).toEqual({
        result: {
          own: ['toolName', 'message'],
          name: 'ToolCallError',
          toolName: 'nope',
          message: 'Unknown tool "nope"',
          is: true,
        },
        logs: [],
      })
      expect(host.inputs.map((input) => input.name)).toEqual(['nope'])
    })

    it('refuses a nested run_code without dispatching it', async () => {
      const host = fakeHost()
      const value = await runCode(
        host,
        'try { await tools.run_code({ code: "return 1", description: "x" }) } catch (e) { return e.message }',
      )
      expect(value).toEqual({
        result: 'run_code cannot be called from inside a run_code program; call the tools directly',
        logs: [],
      })
      expect(host.inputs).toEqual([])
    })

    it('turns a rejecting host.execute (a contract violation) into a ToolCallError', async () => {
      const host = fakeHost(() => Promise.reject(new Error('host exploded')))
      const value = await runCode(host, 'try { await tools.x({}) } catch (e) { return e.message }')
      expect(value).toEqual({ result: 'host exploded', logs: [] })
    })
  })

  describe('R-CODE-2 run_code scheduling', () => {
    it('overlaps concurrency-safe sub-calls up to maxParallelSubCalls', async () => {
      const host = fakeHost(async (input) => {
        await tick()
        await tick()
        return ok(input.callId)
      })
      const value = await runCode(
        host,
        'return (await Promise.all(Array.from({ length: 12 }, (_, i) => tools.p({ i })))).length',
        { maxParallelSubCalls: 3 },
      )
      expect(value).toEqual({ result: 12, logs: [] })
      expect(host.maxActive()).toBe(3)
      expect(host.inputs.map((input) => input.callId)).toEqual(
        Array.from({ length: 12 }, (_, i) => `call-1:code:${i + 1}`),
      )
    })

    it('runs an exclusive sub-call alone: it waits for in-flight calls and holds back later ones', async () => {
      const host = fakeHost(
        async (input) => {
          await tick()
          return ok(input.name)
        },
        { write: 'exclusive' },
      )
      await runCode(
        host,
        'await Promise.all([tools.read({}), tools.read({}), tools.write({}), tools.read({}), tools.read({})])',
        { maxParallelSubCalls: 8 },
      )
      expect(host.events).toEqual([
        'start call-1:code:1',
        'start call-1:code:2',
        'end call-1:code:1',
        'end call-1:code:2',
        'start call-1:code:3',
        'end call-1:code:3',
        'start call-1:code:4',
        'start call-1:code:5',
        'end call-1:code:4',
        'end call-1:code:5',
      ])
    })

    it('fails closed to exclusive when executionMode throws', async () => {
      const host = fakeHost(async (input) => {
        await tick()
        return ok(input.name)
      })
      const throwing: CodeModeHost = {
        ...host,
        executionMode: () => {
          throw new Error('classifier broke')
        },
      }
      await runCode(throwing, 'await Promise.all([tools.a({}), tools.b({})])')
      expect(host.maxActive()).toBe(1)
    })
  })

  describe('R-CODE-3 run_code outcomes', () => {
    it('returns the program value and its logs', async () => {
      const value = await runCode(fakeHost(), 'console.log("hello", 2); console.warn("w"); return { done: true }')
      expect(value).toEqual({ result: { done: true }, logs: ['hello 2', '[warn] w'] })
    })

    it('throws CodeRunFailedError with the reason and the logs so far for runtime failures', async () => {
      const cases: Array<[string, string, RegExp]> = [
        ['return (', 'syntax', /^run_code failed: SyntaxError/],
        [
          'console.log("step 1"); throw new Error("kaput")',
          'thrown',
          /threw Error: kaput\n\nLogs before the failure:\nstep 1$/,
        ],
        ['while (true) {}', 'cpu-limit', /CPU budget of 1000 ms/],
        ['await tools.fail_hard({})', 'thrown', /ToolCallError: hard \(tool "fail_hard"\)/],
        ['return () => 1', 'invalid-result', /result is a function/],
      ]
      for (const [code, reason, message] of cases) {
        const host = fakeHost((input) => (input.name === 'fail_hard' ? fail('hard') : ok(null)))
        const error = await runCode(host, code).then(
          () => undefined,
          (thrown: unknown) => thrown,
        )
        expect(error).toBeInstanceOf(CodeRunFailedError)
        const failed = error as CodeRunFailedError
        expect(failed).toMatchObject({ name: 'CodeRunFailedError', code: 'CODE_RUN_FAILED', reason })
        expect(failed.message).toMatch(message)
      }
    })

    it('drains bindings the program never awaited before resolving; ids stay deterministic', async () => {
      const releases: Array<() => void> = []
      const host = fakeHost(
        (input) =>
          new Promise((resolve) => {
            releases.push(() => resolve(ok(input.callId)))
          }),
      )
      const definition = createRunCodeDefinition(host, { runtime: sandbox })
      const exec = fakeExec('')
      let settled = false
      const pending = definition
        .execute({ code: 'tools.a({}); tools.b({}); return "early"', description: 'x' }, exec)
        .finally(() => {
          settled = true
        })
      // The program settles (aborting the per-run signal) while both bindings are still in flight.
      while (host.inputs.length < 2 || !host.inputs.every((input) => input.signal.aborted)) await tick()
      await tick()
      expect(settled).toBe(false)
      for (const release of releases) release()
      expect(await pending).toEqual({ result: 'early', logs: [] })
      expect(host.active()).toBe(0)
      expect(host.inputs.map((input) => input.callId)).toEqual(['call-1:code:1', 'call-1:code:2'])
      expect(host.logs.map((log) => log.subCallId)).toEqual(['call-1:code:1', 'call-1:code:2'])
    })

    it('caps runaway binding calls with CodeRunFailedError and drains the host', async () => {
      const host = fakeHost(async () => {
        await tick()
        return ok(null)
      })
      const error = await runCode(host, 'for (let i = 0; i < 10000; i++) tools.spam({ i }); return 1').then(
        () => undefined,
        (thrown: unknown) => thrown,
      )
      expect(error).toBeInstanceOf(CodeRunFailedError)
      expect((error as CodeRunFailedError).reason).toBe('call-limit')
      expect(host.inputs).toHaveLength(1000)
      expect(host.active()).toBe(0)
      expect(host.logs).toHaveLength(1000)
      // The host and sandbox stay healthy.
      expect(await runCode(fakeHost(), 'return await tools.after({})')).toEqual({
        result: { tool: 'after', args: {} },
        logs: [],
      })
    })

    it('cancellation of the outer call interrupts the program, aborts and drains bindings, then throws an abort error', async () => {
      const exec = fakeExec('')
      let subSignal: AbortSignal | undefined
      const host = fakeHost(
        (input) =>
          new Promise((resolve) => {
            subSignal = input.signal
            input.signal.addEventListener('abort', () => setImmediate(() => resolve(fail('aborted'))), { once: true })
            setImmediate(() => exec.controller.abort(new Error('user pressed stop')))
          }),
      )
      const error = await runCode(host, 'console.log("started"); await tools.slow({}); return "never"', {}, exec).then(
        () => undefined,
        (thrown: unknown) => thrown,
      )
      expect(error).toBeInstanceOf(ToolAbortedError)
      expect(subSignal?.aborted).toBe(true)
      expect(host.active()).toBe(0)
      expect(host.logs).toHaveLength(1)
    })

    it('defers sub-call contexts and images of successful sub-calls through the outer result, in sub-call order', async () => {
      const image: ContentBlock = { type: 'image', mediaType: 'image/png', data: 'AAAA' }
      const note = (text: string): UserMessage => ({
        role: 'user',
        content: [{ type: 'text', text }],
        source: 'plugin',
      })
      const host = fakeHost(async (input) => {
        const { n } = input.arguments as { n: number }
        if (n === 1) {
          await tick()
          await tick()
          return ok('one', { content: [{ type: 'text', text: 'one' }, image], additionalContexts: [note('ctx one')] })
        }
        if (n === 2) return ok('two', { additionalContexts: [note('ctx two a'), note('ctx two b')] })
        return fail('three failed', { content: [image], additionalContexts: [note('ctx three')] })
      })
      const exec = fakeExec('')
      await runCode(
        host,
        'await Promise.allSettled([tools.a({ n: 1 }), tools.a({ n: 2 }), tools.a({ n: 3 })])',
        {},
        exec,
      )
      expect(exec.deferred).toEqual([
        { role: 'user', content: [image], source: 'call-1:code:1' },
        note('ctx one'),
        note('ctx two a'),
        note('ctx two b'),
        note('ctx three'),
      ])
    })

    it('forwards concludesTurn from a nested success', async () => {
      const host = fakeHost((input) => (input.name === 'finish' ? ok('bye', { concludesTurn: true }) : ok(null)))
      const exec = fakeExec('')
      await runCode(host, 'await tools.other({}); return 1', {}, exec)
      expect(exec.concluded()).toBe(false)
      await runCode(host, 'await tools.finish({}); return 1', {}, exec)
      expect(exec.concluded()).toBe(true)
    })
  })
})
