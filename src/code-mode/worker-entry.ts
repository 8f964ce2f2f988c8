// A Code Mode worker thread: runs one program at a time on its own QuickJS module. Bindings and
// logs cross to the host over the worker's port; guest time and cancellation cross through shared
// memory, because the port is not served while guest code holds the thread.
import { debuglog, format } from 'node:util'
import { parentPort, workerData } from 'node:worker_threads'
import type { EncodedBindingOutcome } from './binding-text.js'
import { quickJsRuntimeStats, type RunMonitor, runQuickJs } from './quickjs-engine.js'
import type { QuickJsLimits } from './quickjs-runtime.js'
import type { StrippedProgram } from './strip-program.js'
import {
  absoluteNow,
  CLOCK_DROPPED,
  CLOCK_IN_SLICE,
  CLOCK_RUN,
  CLOCK_STAMP,
  CLOCK_VM,
  FLAG_ABORT,
  type FromWorker,
  sharedViews,
  type ToWorker,
  type WorkerBoot,
  type WorkerCall,
} from './worker-protocol.js'

if (parentPort === null) throw new Error('toolgate: the Code Mode worker entry must run in a worker thread')

// A worker's console writes to the host's output, which is not the engine's or its libraries' to
// print to: whatever they report goes to the debug channel (`NODE_DEBUG=toolgate`) instead.
const workerDebug = debuglog('toolgate')
for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
  console[level] = (...parts: unknown[]) => workerDebug('code-mode worker %s: %s', level, format(...parts))
}
const boot = workerData as WorkerBoot
const port = boot.port
const { clock, flags } = sharedViews(boot.shared)

interface ActiveRun {
  readonly id: number
  readonly controller: AbortController
  readonly pending: Map<number, (outcome: EncodedBindingOutcome) => void>
  readonly provide: (stripped: StrippedProgram) => void
  readonly outbox: WorkerCall[]
  outboxSince: number
}

/** A slice running this long sends the calls it made so far without waiting for its end. */
const SPIN_FLUSH_MS = 5

let active: ActiveRun | undefined

function send(message: FromWorker): void {
  port.postMessage(message)
}

function monitorOf(run: ActiveRun): RunMonitor {
  const id = run.id
  return {
    publish(vmTimeMs, inSlice) {
      clock[CLOCK_VM] = vmTimeMs
      clock[CLOCK_STAMP] = absoluteNow()
      clock[CLOCK_IN_SLICE] = inSlice ? 1 : 0
      // Calls made during a slice cross together when it ends, so the host schedules them as one
      // batch (as the in-thread runtime does); a slice that keeps running sends them from the
      // interrupt check, so the host still sees a call the program made before it started to spin.
      if (run.outbox.length > 0 && (!inSlice || performance.now() - run.outboxSince >= SPIN_FLUSH_MS)) {
        send({ t: 'calls', id, calls: run.outbox.splice(0) })
      }
    },
    abortRequested: () => Atomics.load(flags, FLAG_ABORT) === id,
    logged: (line) => send({ t: 'log', id, line }),
    dropped(count) {
      clock[CLOCK_DROPPED] = count
    },
  }
}

async function start(id: number, limits: QuickJsLimits, tape: readonly number[] | undefined): Promise<void> {
  let provide: (stripped: StrippedProgram) => void = () => {}
  const stripped = new Promise<StrippedProgram>((resolve) => {
    provide = resolve
  })
  const run: ActiveRun = {
    id,
    controller: new AbortController(),
    pending: new Map(),
    provide,
    outbox: [],
    outboxSince: 0,
  }
  active = run
  clock[CLOCK_RUN] = id
  clock[CLOCK_VM] = 0
  clock[CLOCK_IN_SLICE] = 0
  clock[CLOCK_DROPPED] = 0
  let calls = 0
  const abandonedBefore = quickJsRuntimeStats().abandoned
  const outcome = await runQuickJs(
    {
      code: '',
      signal: run.controller.signal,
      ...(tape === undefined ? {} : { replayTape: tape }),
      callTool: ({ name, args, draws }) => {
        const index = ++calls
        if (run.outbox.length === 0) run.outboxSince = performance.now()
        run.outbox.push(draws === undefined ? { index, name, args } : { index, name, args, draws })
        return new Promise((resolve) => run.pending.set(index, resolve))
      },
    },
    limits,
    () => stripped,
    monitorOf(run),
  )
  active = undefined
  send({ t: 'done', id, outcome, retire: quickJsRuntimeStats().abandoned !== abandonedBefore })
}

port.on('message', (message: ToWorker) => {
  switch (message.t) {
    case 'run':
      void start(message.id, message.limits, message.tape)
      return
    case 'code':
      if (active?.id === message.id) active.provide(message.stripped)
      return
    case 'outcome': {
      const resolve = active?.id === message.id ? active.pending.get(message.index) : undefined
      if (resolve === undefined) return
      active!.pending.delete(message.index)
      resolve(message.outcome)
      return
    }
    case 'abort':
      if (active?.id === message.id) active.controller.abort()
      return
  }
})
