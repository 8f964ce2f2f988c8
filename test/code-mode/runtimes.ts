// The Code Mode suites run against both built-in runtimes (issue 10): the worker pool (default) and
// the in-thread QuickJS runtime.
import { afterAll, beforeAll, expect } from 'vitest'
import type { CodeRuntime } from '../../src/code-mode/code-runtime.js'
import { quickJsRuntimeStats } from '../../src/code-mode/quickjs-engine.js'
import { createQuickJsRuntime, type QuickJsRuntimeOptions } from '../../src/code-mode/quickjs-runtime.js'
import {
  createWorkerRuntime,
  type WorkerCodeRuntime,
  type WorkerCodeRuntimeOptions,
} from '../../src/code-mode/worker-runtime.js'

export const RUNTIME_KINDS = ['inline', 'worker'] as const
export type RuntimeKind = (typeof RUNTIME_KINDS)[number]

const pools: WorkerCodeRuntime[] = []
afterAll(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.dispose()))
})

/** A runtime of `kind`; worker pools are disposed after the file's tests. */
export function makeRuntime(
  kind: RuntimeKind,
  options: QuickJsRuntimeOptions & WorkerCodeRuntimeOptions = {},
): CodeRuntime {
  if (kind === 'inline') return createQuickJsRuntime(options)
  const pool = createWorkerRuntime(options)
  pools.push(pool)
  return pool
}

/**
 * Checks that a run left nothing behind: the in-thread runtime disposed (or abandoned) every QuickJS
 * runtime it created; a worker pool holds no busy worker and no queued run.
 */
export function trackRun(kind: RuntimeKind, runtime: CodeRuntime): () => void {
  if (kind === 'worker') {
    return () => {
      const stats = (runtime as WorkerCodeRuntime).stats()
      expect(stats.busy).toBe(0)
      expect(stats.queued).toBe(0)
    }
  }
  const before = quickJsRuntimeStats()
  return () => {
    const after = quickJsRuntimeStats()
    expect(after.alive).toBe(0)
    expect(after.disposed + after.abandoned - before.disposed - before.abandoned).toBe(after.created - before.created)
  }
}

/** Fail the file if any promise rejection went unhandled while its tests ran. */
export function failOnUnhandledRejections(): void {
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled)
  })
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled)
    expect(unhandled).toEqual([])
  })
}
