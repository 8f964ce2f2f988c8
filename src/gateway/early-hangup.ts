// A SIGHUP that comes while the CLI's bundle loads must not end the process (SIGHUP's default
// action): once the first script has answered the client's first listing, a client or operator
// may well send one before the gateway's reloader listens. The first script holds such signals,
// and the reloader, once it listens, reloads once for them.
import { processShared } from '../util/process-shared.js'

interface HeldSignals {
  count: number
  stop?: (() => void) | undefined
}

/** The count of one signal held early, shared by both bundles (see processShared). */
const held = (name: string): HeldSignals => processShared(name, (): HeldSignals => ({ count: 0 }))

/** Count `signal` under `name` from now on instead of acting on it (`onEach` told each count). */
function holdEarly(name: string, signal: NodeJS.Signals, onEach: (count: number) => void = () => {}): void {
  const record = held(name)
  if (record.stop !== undefined || process.platform === 'win32') return
  const onSignal = () => onEach(++record.count)
  process.on(signal, onSignal)
  record.stop = () => void process.off(signal, onSignal)
}

/** Stop holding what {@link holdEarly} held under `name`: how many came meanwhile. */
function takeEarly(name: string): number {
  const record = held(name)
  record.stop?.()
  record.stop = undefined
  const count = record.count
  record.count = 0
  return count
}

/** Hold SIGHUPs from now until {@link takeEarlyHangups}; counted, not acted on. */
export function holdHangupsEarly(): void {
  holdEarly('earlyHangups', 'SIGHUP')
}

/** Stop holding SIGHUPs (call it once another listener is on): how many came meanwhile. */
export function takeEarlyHangups(): number {
  return takeEarly('earlyHangups')
}

/**
 * Once the first script has announced the HTTP port (raw-first-http.ts), a SIGTERM asks for the
 * drain the gateway does once it serves, not for the process to die while the bundle loads (with
 * requests it holds unanswered): the first is held until {@link takeEarlyTermination}. A second
 * ends the process at once, as a second SIGTERM during a drain does (`exitCode`).
 */
export function holdTerminationEarly(exitCode: number): void {
  holdEarly('earlyTermination', 'SIGTERM', (count) => {
    if (count > 1) process.exit(exitCode)
  })
}

/** Stop holding SIGTERM (call it once another listener is on): whether one came meanwhile. */
export function takeEarlyTermination(): boolean {
  return takeEarly('earlyTermination') > 0
}
