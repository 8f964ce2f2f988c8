import { describe, expect, it } from 'vitest'
import type { CodeBindingCall, CodeBindingOutcome, CodeRunOutcome } from '../../src/code-mode/code-runtime.js'
import { quickJsRuntimeStats } from '../../src/code-mode/quickjs-engine.js'
import { createQuickJsRuntime } from '../../src/code-mode/quickjs-runtime.js'
import { createWorkerRuntime, type WorkerCodeRuntime } from '../../src/code-mode/worker-runtime.js'
import { failOnUnhandledRejections, makeRuntime, RUNTIME_KINDS, trackRun } from './runtimes.js'

failOnUnhandledRejections()

describe.each(RUNTIME_KINDS)('%s runtime', (kind) => {
  const runtime = makeRuntime(kind, { cpuTimeMs: 300, memoryLimitBytes: 16 * 1024 * 1024 })

  function echo(call: CodeBindingCall): Promise<CodeBindingOutcome> {
    if (call.name === 'fail') return Promise.resolve({ ok: false, toolName: call.name, message: 'it broke' })
    return Promise.resolve({ ok: true, value: { name: call.name, args: call.args } })
  }

  /** Run and assert the QuickJS runtime of this run was disposed. */
  async function run(
    code: string,
    options: { signal?: AbortSignal; callTool?: (call: CodeBindingCall) => Promise<CodeBindingOutcome> } = {},
    sandbox = runtime,
  ): Promise<CodeRunOutcome> {
    const clean = trackRun(kind, sandbox)
    const outcome = await sandbox.run({
      code,
      signal: options.signal ?? new AbortController().signal,
      callTool: options.callTool ?? echo,
    })
    clean()
    return outcome
  }

  function failure(outcome: CodeRunOutcome): { reason: string; message: string; logs: readonly string[] } {
    if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`)
    return outcome
  }

  describe('R-CODE-2 QuickJS runtime: programs', () => {
    it('strips TypeScript, supports top-level await and return, and maps undefined to null', async () => {
      const outcome = await run(`
      interface Point { x: number; y: number }
      enum Axis { X = 'x', Y = 'y' }
      const p: Point = { x: 1, y: 2 } as Point
      const echoed = await tools.echo({ p })
      return { sum: p.x + p.y, axis: Axis.Y, echoed, negZero: -0 }
    `)
      expect(outcome).toEqual({
        ok: true,
        value: { sum: 3, axis: 'y', echoed: { name: 'echo', args: { p: { x: 1, y: 2 } } }, negZero: 0 },
        logs: [],
      })
      expect(await run('return')).toEqual({ ok: true, value: null, logs: [] })
      expect(await run('const x = 1')).toEqual({ ok: true, value: null, logs: [] })
    })

    it('captures console output as strings, with level prefixes and caps', async () => {
      const outcome = await run(`
      console.log('plain', 1, { a: [1, null] }, undefined, () => 1)
      console.info('info')
      console.warn('careful')
      console.error(new TypeError('bad'))
      return 'done'
    `)
      expect(outcome).toEqual({
        ok: true,
        value: 'done',
        logs: [
          'plain 1 {"a":[1,null]} undefined [Function anonymous]',
          'info',
          '[warn] careful',
          '[error] TypeError: bad',
        ],
      })
      const capped = makeRuntime(kind, { maxLogLines: 2, maxLogChars: 12 })
      const out = await run(
        'for (let i = 0; i < 5; i++) console.log("line-" + i); console.log("x".repeat(50))',
        {},
        capped,
      )
      expect(out).toEqual({ ok: true, value: null, logs: ['line-0', 'line-1', '… 4 more log line(s) dropped'] })
      const chars = await run('console.log("x".repeat(50))', {}, capped)
      expect(chars.logs).toEqual([`${'x'.repeat(12)}… (truncated)`])
    })

    it('rejects a non-JSON return value with its path', async () => {
      const outcome = failure(await run('return { nested: [1, () => 2] }'))
      expect(outcome.reason).toBe('invalid-result')
      expect(outcome.message).toContain('result.nested[1] is a function')
      expect(failure(await run('return { x: NaN }')).message).toContain('result.x is NaN')
      expect(failure(await run('return new Map()')).message).toContain('result is a Map instance')
    })

    it('reports syntax errors with the line and column in the program', async () => {
      const outcome = failure(await run('const a = 1\nconst b = = 2\nreturn a'))
      expect(outcome.reason).toBe('syntax')
      expect(outcome.message).toMatch(/^SyntaxError at line 2, column 11: /)
      expect(outcome.message).toContain('const b = = 2')
      expect(failure(await run('return (1 +')).reason).toBe('syntax')
      expect(failure(await run('import fs from "fs"')).reason).toBe('syntax')
      expect(failure(await run('export const x = 1')).reason).toBe('syntax')
    })

    it('reports an uncaught throw as thrown, with the logs so far', async () => {
      const outcome = failure(await run('console.log("before"); throw new RangeError("nope")'))
      expect(outcome).toEqual({
        ok: false,
        reason: 'thrown',
        message: 'the program threw RangeError: nope',
        logs: ['before'],
      })
      expect(failure(await run('throw { code: 7 }')).message).toBe('the program threw Uncaught {"code":7}')
    })

    it('fails a program whose promise can never settle as stalled', async () => {
      expect(failure(await run('await new Promise(() => {})')).reason).toBe('stalled')
    })
  })

  describe('R-CODE-2 QuickJS runtime: no ambient authority', () => {
    it('exposes only the language, tools, ToolCallError and console', async () => {
      const outcome = await run(`
      return ['process', 'require', 'module', 'exports', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask',
        'fetch', 'XMLHttpRequest', 'WebSocket', 'WebAssembly', 'Worker', 'std', 'os', 'Deno', 'Bun', 'performance',
        'navigator', 'Buffer', 'global'].filter((name) => typeof globalThis[name] !== 'undefined')
    `)
      expect(outcome).toEqual({ ok: true, value: [], logs: [] })
      const present = await run('return [typeof tools, typeof ToolCallError, typeof console.log, typeof JSON.parse]')
      expect(present).toEqual({ ok: true, value: ['object', 'function', 'function', 'function'], logs: [] })
      // crypto holds getRandomValues only (issue 40, item 2: recorded for a replay), and no subtle.
      const crypto = await run(
        'return [Object.getOwnPropertyNames(crypto), Object.isFrozen(crypto), typeof crypto.subtle]',
      )
      expect(crypto).toEqual({ ok: true, value: [['getRandomValues'], true, 'undefined'], logs: [] })
    })

    it('blocks the Function-constructor escape, eval, and dynamic import', async () => {
      for (const code of [
        'return globalThis.constructor.constructor("return process")()',
        'return (async function () {}).constructor("return 1")',
        'return (function* () {}).constructor("yield 1")',
        'return eval("1 + 1")',
        'return Function("return this")()',
      ]) {
        const outcome = failure(await run(code))
        expect(outcome.reason).toBe('thrown')
        expect(outcome.message).toContain('EvalError: dynamic code evaluation (eval, Function) is disabled')
      }
      const imported = failure(await run('return await import("fs")'))
      expect(imported.reason).toBe('thrown')
      expect(imported.message).toContain("could not load module 'fs'")
      const required = failure(await run('return require("fs")'))
      expect(required.message).toContain("'require' is not defined")
      const proc = failure(await run('return process.env'))
      expect(proc.message).toContain("'process' is not defined")
    })

    it('gives every run a fresh context: globals do not leak between runs', async () => {
      expect(await run('globalThis.leak = 42; return 1')).toMatchObject({ ok: true })
      expect(await run('return typeof globalThis.leak')).toEqual({ ok: true, value: 'undefined', logs: [] })
    })
  })

  describe('R-CODE-2 QuickJS runtime: limits', () => {
    it('interrupts an infinite loop at the CPU budget', async () => {
      const outcome = failure(await run('console.log("spinning"); while (true) {}'))
      expect(outcome).toMatchObject({ reason: 'cpu-limit', logs: ['spinning'] })
      expect(outcome.message).toBe('the program exceeded its CPU budget of 300 ms')
      // Catching cannot resume: the interrupt is uncatchable and the budget stays spent.
      expect(failure(await run('try { while (true) {} } catch { return "escaped" }')).reason).toBe('cpu-limit')
    })

    it('stops unbounded allocation at the memory limit, in JS-heavy and allocation-heavy loops', async () => {
      // A CPU budget no loaded machine reaches before 16 MiB, so the memory limit is what stops the
      // run (with 300 ms, a busy machine's garbage collection could spend the budget first).
      const roomy = makeRuntime(kind, { cpuTimeMs: 60_000, memoryLimitBytes: 16 * 1024 * 1024 })
      const objects = failure(await run('const a = []; for (let i = 0; ; i++) a.push({ i, s: "x" + i })', {}, roomy))
      expect(objects.reason).toBe('memory-limit')
      expect(objects.message).toContain('memory limit of 16 MiB')
      const typed = failure(await run('const a = []; for (;;) a.push(new Float64Array(100000))', {}, roomy))
      expect(typed.reason).toBe('memory-limit')
      const single = failure(await run('return new Float64Array(1e8).length', {}, roomy))
      expect(single.reason).toBe('memory-limit')
      // The module stays healthy for the next run.
      expect(await run('return [1, 2].map((x) => x * 2)')).toEqual({ ok: true, value: [2, 4], logs: [] })
    })

    it('stops deep recursion at the stack limit (also through natively recursive built-ins)', async () => {
      const plain = failure(await run('function f(n: number): number { return f(n + 1) + 1 } return f(0)'))
      expect(plain.reason).toBe('stack-limit')
      const native = failure(
        await run('let c: unknown[] = []; for (let i = 0; i < 200000; i++) c = [c]; return JSON.stringify(c).length'),
      )
      expect(native.reason).toBe('stack-limit')
      const parsed = failure(await run(`return ${'['.repeat(50_000)}${']'.repeat(50_000)}`))
      expect(parsed.reason).toBe('syntax')
    })

    it('fails a run that exhausts the host stack as stack-limit, replaces what it tore, and keeps serving runs', async () => {
      // A QuickJS stack limit far above the host's lets JSON.stringify exhaust the host stack inside wasm.
      const reckless = makeRuntime(kind, { maxStackSizeBytes: 512 * 1024 })
      expect(await run('return "warm"', {}, reckless)).toMatchObject({ ok: true })
      const before = quickJsRuntimeStats()
      const started = kind === 'worker' ? (reckless as WorkerCodeRuntime).stats().started : 0
      const torn = failure(
        await run(
          'let c: unknown[] = []; for (let i = 0; i < 300000; i++) c = [c]; return JSON.stringify(c).length',
          {},
          reckless,
        ),
      )
      expect(torn.reason).toBe('stack-limit')
      if (kind === 'inline') {
        // The torn runtime is abandoned and the shared module retired: the next run loads a fresh one.
        expect(quickJsRuntimeStats().abandoned).toBe(before.abandoned + 1)
        expect(await run('return "still fine"')).toEqual({ ok: true, value: 'still fine', logs: [] })
        expect(quickJsRuntimeStats().modulesLoaded).toBe(before.modulesLoaded + 1)
      } else {
        // A worker owns its module: the worker that ran it is replaced.
        expect((reckless as WorkerCodeRuntime).stats()).toMatchObject({ started: started + 1, alive: 1 })
        expect(await run('return "still fine"', {}, reckless)).toEqual({ ok: true, value: 'still fine', logs: [] })
      }
    })

    it('fails the run when it makes more tool calls than the cap', async () => {
      let calls = 0
      // A CPU budget no loaded machine reaches in 1,000 calls, so the call cap is what stops the run.
      const roomy = makeRuntime(kind, { cpuTimeMs: 60_000, memoryLimitBytes: 16 * 1024 * 1024 })
      const outcome = failure(
        await run(
          'for (let i = 0; i < 10000; i++) tools.a({ i }); return "unreachable"',
          {
            callTool: () => {
              calls++
              return Promise.resolve({ ok: true, value: null })
            },
          },
          roomy,
        ),
      )
      expect(outcome.reason).toBe('call-limit')
      expect(outcome.message).toBe('the program made more than 1000 tool calls')
      expect(calls).toBe(1000)
    })

    it('validates its options', () => {
      const create = kind === 'inline' ? createQuickJsRuntime : createWorkerRuntime
      const where = kind === 'inline' ? 'createQuickJsRuntime' : 'createWorkerRuntime'
      expect(() => create({ cpuTimeMs: 0 })).toThrow(
        `${where}(options).cpuTimeMs: expected a positive finite number, got 0`,
      )
      expect(() => create({ memoryLimitBytes: Number.NaN })).toThrow(/memoryLimitBytes/)
      expect(() => create({ maxResultBytes: -1 })).toThrow(
        `${where}(options).maxResultBytes: expected a positive finite number, got -1`,
      )
      if (kind === 'worker') {
        expect(() => createWorkerRuntime({ poolSize: 1.5 })).toThrow(
          'createWorkerRuntime(options).poolSize: expected a positive integer, got 1.5',
        )
        expect(() => createWorkerRuntime({ resourceLimits: { stackSizeMb: 0 } })).toThrow(
          'createWorkerRuntime(options).resourceLimits.stackSizeMb',
        )
        expect(() => createWorkerRuntime({ resourceLimits: { maxOldGenerationSizeMb: 100 } })).toThrow(
          'createWorkerRuntime(options).resourceLimits.maxOldGenerationSizeMb: expected at least 256 (4× memoryLimitBytes), got 100',
        )
      }
    })
  })

  describe('R-CODE-2 QuickJS runtime: bindings', () => {
    it('routes tools.<name>(args) and tools["odd-name"](), resolving with the value', async () => {
      const outcome = await run(
        'return [await tools.read({ path: "/a" }), await tools["odd-name"](), tools.read === tools.read]',
      )
      expect(outcome).toEqual({
        ok: true,
        value: [{ name: 'read', args: { path: '/a' } }, { name: 'odd-name', args: {} }, true],
        logs: [],
      })
    })

    it('rejects failed calls with a ToolCallError carrying only toolName and message', async () => {
      const outcome = await run(`
      try { await tools.fail({}) } catch (e) {
        return { keys: Object.keys(e), own: Object.getOwnPropertyNames(e), name: e.name, toolName: e.toolName,
          message: e.message, isToolCallError: e instanceof ToolCallError, isError: e instanceof Error,
          text: String(e), json: JSON.stringify(e) }
      }
    `)
      expect(outcome).toEqual({
        ok: true,
        value: {
          keys: ['toolName', 'message'],
          own: ['toolName', 'message'],
          name: 'ToolCallError',
          toolName: 'fail',
          message: 'it broke',
          isToolCallError: true,
          isError: true,
          text: 'ToolCallError: it broke',
          json: '{"toolName":"fail","message":"it broke"}',
        },
        logs: [],
      })
      const uncaught = failure(await run('await tools.fail({})'))
      expect(uncaught).toMatchObject({
        reason: 'thrown',
        message: 'the program threw ToolCallError: it broke (tool "fail")',
      })
    })

    it('rejects non-JSON arguments in the program with a clear, path-qualified message and never calls the host', async () => {
      let calls = 0
      const callTool = (call: CodeBindingCall) => {
        calls++
        return echo(call)
      }
      const outcome = await run(
        `
      const attempts = [() => tools.x({ fn: () => 1 }), () => tools.x(undefined), () => tools.x({ a: undefined }),
        () => tools.x({ big: 10n }), () => tools.x({ n: Infinity }), () => tools.x({ d: new Date(0) }),
        () => tools["odd name"]([1, , 3]), () => { const o: any = {}; o.self = o; return tools.x(o) },
        () => tools.x({ get g() { return 1 } }), () => tools.x({ [Symbol('s')]: 1 })]
      const messages = []
      for (const attempt of attempts) { try { await attempt() } catch (e) { messages.push(e instanceof TypeError ? e.message : 'wrong: ' + e) } }
      return messages
    `,
        { callTool },
      )
      expect(calls).toBe(0)
      expect(outcome.ok && outcome.value).toEqual([
        'tools.x(args): args.fn is a function (only JSON values cross the sandbox boundary)',
        'tools.x(args): args is undefined (only JSON values cross the sandbox boundary)',
        'tools.x(args): args.a is undefined (only JSON values cross the sandbox boundary)',
        'tools.x(args): args.big is a bigint (only JSON values cross the sandbox boundary)',
        'tools.x(args): args.n is Infinity, not a finite number (only JSON values cross the sandbox boundary)',
        'tools.x(args): args.d is a Date instance, not a plain object (only JSON values cross the sandbox boundary)',
        'tools["odd name"](args): args is a sparse array (only JSON values cross the sandbox boundary)',
        'tools.x(args): args.self is a circular reference (only JSON values cross the sandbox boundary)',
        'tools.x(args): args.g is an accessor property (only JSON values cross the sandbox boundary)',
        'tools.x(args): args has a symbol key (only JSON values cross the sandbox boundary)',
      ])
    })

    it('keeps awaiting the tools proxy inert and forbids redefining bindings', async () => {
      const outcome = await run(`
      const t = await tools
      let assigned = 'assigned'
      try { tools.x = 1 } catch (e) { assigned = String(e) }
      return [t === tools, typeof tools.then, typeof tools.x, assigned]
    `)
      expect(outcome).toEqual({
        ok: true,
        value: [true, 'undefined', 'function', 'TypeError: proxy: cannot set property'],
        logs: [],
      })
    })

    it('settles once with the return value even when bindings are still in flight; late outcomes are dropped', async () => {
      const pending: Array<(outcome: CodeBindingOutcome) => void> = []
      const outcome = await run('tools.slow({}); tools.slow({}); return "early"', {
        callTool: () => new Promise((resolve) => pending.push(resolve)),
      })
      expect(outcome).toEqual({ ok: true, value: 'early', logs: [] })
      expect(pending).toHaveLength(2)
      for (const resolve of pending) resolve({ ok: true, value: 1 })
      await new Promise((resolve) => setImmediate(resolve))
    })

    it('aborts promptly when the signal fires while the program awaits a tool', async () => {
      const controller = new AbortController()
      const outcome = failure(
        await run('console.log("waiting"); await tools.slow({}); return "never"', {
          signal: controller.signal,
          callTool: () => {
            setImmediate(() => controller.abort())
            return new Promise(() => {})
          },
        }),
      )
      expect(outcome).toMatchObject({ reason: 'aborted', logs: ['waiting'] })
      const already = new AbortController()
      already.abort()
      expect(failure(await run('return 1', { signal: already.signal })).reason).toBe('aborted')
    })

    it('interrupts a busy program when a binding aborts the signal synchronously', async () => {
      const controller = new AbortController()
      const outcome = failure(
        await run('tools.stop({}); while (true) {}', {
          signal: controller.signal,
          callTool: () => {
            controller.abort()
            return new Promise(() => {})
          },
        }),
      )
      expect(outcome.reason).toBe('aborted')
    })
  })
})
