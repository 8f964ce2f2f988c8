// The shared scheduler behind executeBatch and Code Mode sub-calls (issue 21 item 5, R-SCHED-1).
import { describe, expect, it } from 'vitest'
import type { ToolExecutionInput, ToolExecutionMode } from '../../src/contract/execution.js'
import { CallScheduler, classifyCall } from '../../src/scheduling/call-scheduler.js'
import { deferred, flush } from './fakes.js'

const PARALLEL: ToolExecutionMode = { kind: 'parallel' }
const EXCLUSIVE: ToolExecutionMode = { kind: 'exclusive' }
const input: ToolExecutionInput = { callId: 'c', name: 't', arguments: {}, signal: new AbortController().signal }

describe('R-SCHED-1 CallScheduler', () => {
  it('starts inside submit() by default, and only from a microtask with deferStart', async () => {
    const started: string[] = []
    const eager = new CallScheduler()
    eager.submit(PARALLEL, async () => started.push('eager'))
    expect(started).toEqual(['eager'])
    const deferredStart = new CallScheduler({ deferStart: true })
    deferredStart.submit(PARALLEL, async () => started.push('a'))
    deferredStart.submit(EXCLUSIVE, async () => started.push('b'))
    expect(started).toEqual(['eager'])
    const idle = deferredStart.idle()
    await idle
    expect(started).toEqual(['eager', 'a', 'b'])
  })

  it('a start that throws or rejects counts as settled: the queue never stalls and idle() resolves', async () => {
    const scheduler = new CallScheduler({ maxParallel: 1 })
    const ran: string[] = []
    scheduler.submit(EXCLUSIVE, () => {
      ran.push('throws')
      throw new Error('sync')
    })
    scheduler.submit(PARALLEL, async () => {
      ran.push('rejects')
      throw new Error('async')
    })
    scheduler.submit(EXCLUSIVE, async () => {
      ran.push('last')
    })
    await scheduler.idle()
    expect(ran).toEqual(['throws', 'rejects', 'last'])
  })

  it('idle() waits for in-flight calls and for calls submitted while waiting', async () => {
    const scheduler = new CallScheduler()
    const first = deferred()
    const second = deferred()
    scheduler.submit(EXCLUSIVE, () => first.promise)
    let idle = false
    const waiting = scheduler.idle().then(() => {
      idle = true
    })
    scheduler.submit(PARALLEL, () => second.promise)
    first.resolve()
    await flush()
    expect(idle).toBe(false)
    second.resolve()
    await waiting
    expect(idle).toBe(true)
  })

  it('classifyCall fails closed: a throw, a missing answer or an unknown kind is exclusive', () => {
    expect(classifyCall(() => PARALLEL, input)).toEqual(PARALLEL)
    expect(classifyCall(() => EXCLUSIVE, input)).toEqual(EXCLUSIVE)
    expect(
      classifyCall(() => {
        throw new Error('broken')
      }, input),
    ).toEqual(EXCLUSIVE)
    expect(classifyCall(() => undefined as unknown as ToolExecutionMode, input)).toEqual(EXCLUSIVE)
    expect(classifyCall(() => ({ kind: 'Parallel' }) as unknown as ToolExecutionMode, input)).toEqual(EXCLUSIVE)
  })
})
