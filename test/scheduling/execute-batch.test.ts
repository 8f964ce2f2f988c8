import { describe, expect, it } from 'vitest'
import type { ToolExecutionInput, ToolExecutionResult } from '../../src/contract/execution.js'
import { DEFAULT_MAX_PARALLEL, executeBatch } from '../../src/scheduling/execute-batch.js'
import { call, FakeRuntime, failure, flush, success, until } from './fakes.js'

describe('R-SCHED-1 executeBatch: order, barriers and the rolling pool', () => {
  it('returns one entry per call in call order, whatever the completion order', async () => {
    const tools = new FakeRuntime()
    const calls = [call('a', 'p1'), call('b', 'p2'), call('c', 'p3')]
    const batch = executeBatch(tools, calls)
    await until(() => tools.running.size === 3, 'three parallel calls')
    tools.release('c')
    tools.release('a')
    await flush()
    tools.release('b', failure('TOOL_ERROR', 'b broke'))
    const { results, concludesTurn } = await batch
    expect(results.map((entry) => entry.call.callId)).toEqual(['a', 'b', 'c'])
    expect(results.map((entry) => entry.index)).toEqual([0, 1, 2])
    expect(results.map((entry) => entry.result.isError)).toEqual([false, true, false])
    expect(results.every((entry, i) => entry.call === calls[i])).toBe(true)
    expect(results.map((entry) => entry.mode.kind)).toEqual(['parallel', 'parallel', 'parallel'])
    expect(concludesTurn).toBe(false)
    expect(tools.log.indexOf('end:c')).toBeLessThan(tools.log.indexOf('end:b'))
  })

  it('runs an exclusive call alone: after every earlier call settled, before any later one starts', async () => {
    const tools = new FakeRuntime()
    const batch = executeBatch(tools, [call('p1', 'p'), call('p2', 'p'), call('x', 'write'), call('p3', 'p')])
    await until(() => tools.running.size === 2, 'the leading parallel pair')
    await flush()
    expect(tools.started()).toEqual(['p1', 'p2'])
    tools.release('p2')
    await flush()
    expect(tools.started()).toEqual(['p1', 'p2']) // the barrier still waits for p1
    tools.release('p1')
    await until(() => tools.running.has('x'), 'the exclusive call')
    await flush()
    expect([...tools.running]).toEqual(['x']) // alone
    tools.release('x')
    await until(() => tools.running.has('p3'), 'the trailing parallel call')
    tools.release('p3')
    await batch
    const at = (line: string) => tools.log.indexOf(line)
    expect(at('start:x')).toBeGreaterThan(at('end:p1'))
    expect(at('start:x')).toBeGreaterThan(at('end:p2'))
    expect(at('start:p3')).toBeGreaterThan(at('end:x'))
  })

  it('consecutive exclusive calls run strictly one after another', async () => {
    const tools = new FakeRuntime()
    tools.autoRelease = true
    await executeBatch(tools, [call('a', 'x'), call('b', 'y'), call('c', 'z')])
    expect(tools.log).toEqual(['start:a', 'end:a', 'start:b', 'end:b', 'start:c', 'end:c'])
    expect(tools.maxRunning).toBe(1)
  })

  it('keeps at most maxParallel calls in flight and refills the pool as each settles (rolling, in call order)', async () => {
    const tools = new FakeRuntime()
    const calls = Array.from({ length: 7 }, (_, i) => call(`c${i}`, 'p'))
    const batch = executeBatch(tools, calls, { maxParallel: 3 })
    await until(() => tools.running.size === 3, 'a full pool')
    await flush()
    expect(tools.started()).toEqual(['c0', 'c1', 'c2'])
    tools.release('c1')
    await until(() => tools.started().length === 4, 'a refill')
    await flush()
    // Rolling, not chunked: c3 started while c0 and c2 are still running.
    expect([...tools.running].sort()).toEqual(['c0', 'c2', 'c3'])
    for (const id of ['c0', 'c2', 'c3', 'c4', 'c5', 'c6']) {
      await until(() => tools.running.has(id), id)
      tools.release(id)
    }
    const { results } = await batch
    expect(results).toHaveLength(7)
    expect(tools.maxRunning).toBe(3)
    expect(tools.started()).toEqual(calls.map((c) => c.callId))
  })

  it(`defaults to a pool of ${DEFAULT_MAX_PARALLEL}`, async () => {
    const tools = new FakeRuntime()
    const calls = Array.from({ length: 20 }, (_, i) => call(`c${i}`, 'p'))
    const batch = executeBatch(tools, calls)
    await until(() => tools.running.size === DEFAULT_MAX_PARALLEL, 'a full default pool')
    await flush()
    expect(tools.running.size).toBe(DEFAULT_MAX_PARALLEL)
    tools.autoRelease = true
    for (const id of [...tools.running]) tools.release(id)
    const { results } = await batch
    expect(results.filter((entry) => !entry.result.isError)).toHaveLength(20)
    expect(tools.maxRunning).toBe(DEFAULT_MAX_PARALLEL)
  })

  it('maxParallel 1 serializes parallel calls', async () => {
    const tools = new FakeRuntime()
    tools.autoRelease = true
    await executeBatch(tools, [call('a', 'p'), call('b', 'p'), call('c', 'p')], { maxParallel: 1 })
    expect(tools.log).toEqual(['start:a', 'end:a', 'start:b', 'end:b', 'start:c', 'end:c'])
  })

  it('classifies fail-closed: a throwing or odd executionMode is exclusive', async () => {
    const order: string[] = []
    const tools = {
      executionMode(input: ToolExecutionInput) {
        if (input.name === 'boom') throw new Error('classifier broke')
        if (input.name === 'odd') return { kind: 'PARALLEL' } as unknown as { kind: 'parallel' }
        return { kind: 'parallel' as const }
      },
      async execute(input: ToolExecutionInput): Promise<ToolExecutionResult> {
        order.push(`start:${input.callId}`)
        await flush(1)
        order.push(`end:${input.callId}`)
        return success(input.callId)
      },
    }
    const { results } = await executeBatch(tools, [call('a', 'p'), call('b', 'boom'), call('c', 'odd'), call('d', 'p')])
    expect(results.map((entry) => entry.mode.kind)).toEqual(['parallel', 'exclusive', 'exclusive', 'parallel'])
    expect(order).toEqual(['start:a', 'end:a', 'start:b', 'end:b', 'start:c', 'end:c', 'start:d', 'end:d'])
  })

  it('handles an empty turn', async () => {
    const tools = new FakeRuntime()
    const batch = await executeBatch(tools, [])
    expect(batch).toEqual({ results: [], concludesTurn: false })
    expect(Object.isFrozen(batch.results)).toBe(true)
  })
})

describe('R-SCHED-1 executeBatch: failures, concludesTurn and observers', () => {
  it('a failed call never stops the batch; a rejecting execute becomes an error result', async () => {
    const tools = {
      executionMode: () => ({ kind: 'exclusive' as const }),
      async execute(input: ToolExecutionInput): Promise<ToolExecutionResult> {
        if (input.callId === 'reject') throw new TypeError('runtime exploded')
        if (input.callId === 'fail') return failure('TOOL_ERROR', 'nope')
        return success(input.callId)
      },
    }
    const { results } = await executeBatch(tools, [call('fail'), call('reject'), call('ok')])
    expect(results.map((entry) => entry.result.isError)).toEqual([true, true, false])
    const rejected = results[1].result
    expect(rejected.isError && rejected.error).toEqual({
      message: 'runtime exploded',
      info: { name: 'TypeError', code: 'TOOL_ERROR' },
    })
    expect(rejected.content).toEqual([{ type: 'text', text: 'runtime exploded' }])
  })

  it('reports concludesTurn when any success concluded the turn, after running every call', async () => {
    const tools = {
      executionMode: () => ({ kind: 'parallel' as const }),
      async execute(input: ToolExecutionInput): Promise<ToolExecutionResult> {
        return input.callId === 'done' ? success('done', { concludesTurn: true }) : success(input.callId)
      },
    }
    const concluded = await executeBatch(tools, [call('a'), call('done'), call('c')])
    expect(concluded.concludesTurn).toBe(true)
    expect(concluded.results).toHaveLength(3)
    const plain = await executeBatch(tools, [call('a'), call('c')])
    expect(plain.concludesTurn).toBe(false)
  })

  it('calls onStart/onResult as things happen and contains their failures', async () => {
    const tools = new FakeRuntime()
    tools.autoRelease = true
    const seen: string[] = []
    const { results } = await executeBatch(tools, [call('a', 'p'), call('b', 'x')], {
      onStart(c, index, mode) {
        seen.push(`start ${c.callId} #${index} ${mode.kind}`)
        throw new Error('observer bug')
      },
      onResult(entry) {
        seen.push(`result ${entry.call.callId} ${entry.result.isError}`)
        throw new Error('observer bug')
      },
    })
    expect(seen).toEqual(['start a #0 parallel', 'result a false', 'start b #1 exclusive', 'result b false'])
    expect(results).toHaveLength(2)
  })
})

describe('R-SCHED-1 executeBatch: cancellation reaches every call', () => {
  it('aborting a running batch aborts running calls and still executes (and reports) the rest', async () => {
    const tools = new FakeRuntime()
    const controller = new AbortController()
    const calls = [call('p1', 'p'), call('p2', 'p'), call('p3', 'p'), call('x', 'write'), call('p4', 'p')]
    const batch = executeBatch(tools, calls, { maxParallel: 2, signal: controller.signal })
    await until(() => tools.running.size === 2, 'a running pool')
    controller.abort(new Error('user pressed ctrl-c'))
    const { results } = await batch
    expect(results.map((entry) => entry.call.callId)).toEqual(['p1', 'p2', 'p3', 'x', 'p4'])
    const codes = results.map((entry) => (entry.result.isError ? entry.result.error.info?.code : 'ok'))
    expect(codes).toEqual([
      'ABORTED',
      'ABORTED',
      'ABORTED_BEFORE_DISPATCH',
      'ABORTED_BEFORE_DISPATCH',
      'ABORTED_BEFORE_DISPATCH',
    ])
    // Every call went through execute(), with a signal that carries the batch's cancellation.
    for (const c of calls) {
      const received = tools.received.get(c.callId)
      expect(received?.signal.aborted).toBe(true)
      expect(received?.signal.reason).toEqual(new Error('user pressed ctrl-c'))
      expect(c.signal.aborted).toBe(false) // the caller's own signals are untouched
    }
  })

  it('an already-aborted batch signal still yields a result for every call', async () => {
    const tools = new FakeRuntime()
    const { results } = await executeBatch(tools, [call('a', 'p'), call('b', 'x')], { signal: AbortSignal.abort() })
    expect(results.map((entry) => entry.result.isError && entry.result.error.info?.code)).toEqual([
      'ABORTED_BEFORE_DISPATCH',
      'ABORTED_BEFORE_DISPATCH',
    ])
    expect(tools.log).toEqual(['skip:a', 'skip:b'])
  })

  it("a call's own signal still cancels just that call", async () => {
    const tools = new FakeRuntime()
    const own = new AbortController()
    const batch = executeBatch(tools, [call('a', 'p', {}, own.signal), call('b', 'p')], {
      signal: new AbortController().signal,
    })
    await until(() => tools.running.size === 2, 'both calls')
    own.abort()
    await until(() => !tools.running.has('a'), 'a cancelled')
    tools.release('b')
    const { results } = await batch
    expect(results[0].result.isError && results[0].result.error.info?.code).toBe('ABORTED')
    expect(results[1].result.isError).toBe(false)
  })

  it('without a batch signal, calls are passed through unchanged', async () => {
    const tools = new FakeRuntime()
    tools.autoRelease = true
    const calls = [call('a', 'p')]
    await executeBatch(tools, calls)
    expect(tools.received.get('a')).toBe(calls[0])
  })
})

describe('R-SCHED-1 executeBatch: input validation', () => {
  const tools = new FakeRuntime()
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2'])(
    'rejects maxParallel %s with a clear error',
    (bad) => {
      expect(() => executeBatch(tools, [call('a')], { maxParallel: bad as number })).toThrow(
        /^executeBatch\(options\)\.maxParallel: expected a positive integer/,
      )
      expect(tools.log).toEqual([])
    },
  )

  it('rejects a non-runtime, non-array calls, a call without a signal and a bad batch signal', () => {
    expect(() => executeBatch({} as FakeRuntime, [])).toThrow(
      /executeBatch\(tools\): expected execute\(\) and executionMode\(\)/,
    )
    expect(() => executeBatch(tools, {} as ToolExecutionInput[])).toThrow(/calls\): expected an array/)
    const unsignalled = { callId: 'x', name: 't', arguments: {} } as unknown as ToolExecutionInput
    expect(() => executeBatch(tools, [call('a'), unsignalled])).toThrow(/calls\)\[1\]\.signal: expected an AbortSignal/)
    expect(() => executeBatch(tools, [], { signal: {} as AbortSignal })).toThrow(
      /executeBatch\(options\)\.signal: expected an AbortSignal/,
    )
    expect(() => executeBatch(tools, [], { onResult: 1 as unknown as () => void })).toThrow(/options\)\.onResult/)
  })
})
