// A call's signal joined to a signal that lives as long as the gateway (the drain's stop signal):
// `AbortSignal.any` against the runtime's `fuseSignals`, N calls in a row, wall time and the heap
// still held per call after GC. Not part of `npm test`. Run it on each Node line:
//
//   node --expose-gc --import tsx bench/call-signals.bench.ts [calls=40000]

import { fuseSignals } from '../src/runtime/index.js'

const calls = Number(process.argv[2] ?? 40_000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with --expose-gc')

async function run(mode: 'AbortSignal.any' | 'fuseSignals'): Promise<void> {
  const gateway = new AbortController()
  gc?.()
  const before = process.memoryUsage().heapUsed
  const start = performance.now()
  for (let i = 0; i < calls; i++) {
    const call = new AbortController()
    if (mode === 'AbortSignal.any') void AbortSignal.any([call.signal, gateway.signal]).aborted
    else {
      const fused = fuseSignals(call.signal, gateway.signal)
      void fused.signal.aborted
      fused.release()
    }
    // Let finalizers and microtasks run, as between real calls.
    if (i % 5000 === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  const ms = performance.now() - start
  for (let k = 0; k < 5; k++) {
    gc?.()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const held = (process.memoryUsage().heapUsed - before) / calls
  console.log(`${process.version} ${mode}: ${calls} calls in ${ms.toFixed(0)} ms, ${held.toFixed(1)} B held per call`)
}

await run('AbortSignal.any')
await run('fuseSignals')
