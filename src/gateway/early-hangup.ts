// A SIGHUP that comes while the CLI's bundle loads must not end the process (SIGHUP's default
// action): once the first script has answered the client's first listing, a client or operator
// may well send one before the gateway's reloader listens. The first script holds such signals,
// and the reloader, once it listens, reloads once for them.
import { processShared } from '../util/process-shared.js'

interface HeldHangups {
  count: number
  stop?: (() => void) | undefined
}

const held = (): HeldHangups => processShared('earlyHangups', (): HeldHangups => ({ count: 0 }))

/** Hold SIGHUPs from now until {@link takeEarlyHangups}; counted, not acted on. */
export function holdHangupsEarly(): void {
  const record = held()
  if (record.stop !== undefined || process.platform === 'win32') return
  const onHangup = () => {
    record.count++
  }
  process.on('SIGHUP', onHangup)
  record.stop = () => void process.off('SIGHUP', onHangup)
}

/** Stop holding SIGHUPs (call it once another listener is on): how many came meanwhile. */
export function takeEarlyHangups(): number {
  const record = held()
  record.stop?.()
  record.stop = undefined
  const count = record.count
  record.count = 0
  return count
}

interface HeldTermination {
  count: number
  stop?: (() => void) | undefined
}

const heldTerms = (): HeldTermination => processShared('earlyTermination', (): HeldTermination => ({ count: 0 }))

/**
 * Once the first script has announced the HTTP port (raw-first-http.ts), a SIGTERM asks for the
 * drain the gateway does once it serves, not for the process to die while the bundle loads (with
 * requests it holds unanswered): the first is held until {@link takeEarlyTermination}. A second
 * ends the process at once, as a second SIGTERM during a drain does (`exitCode`).
 */
export function holdTerminationEarly(exitCode: number): void {
  const record = heldTerms()
  if (record.stop !== undefined || process.platform === 'win32') return
  const onTerm = () => {
    if (++record.count > 1) process.exit(exitCode)
  }
  process.on('SIGTERM', onTerm)
  record.stop = () => void process.off('SIGTERM', onTerm)
}

/** Stop holding SIGTERM (call it once another listener is on): whether one came meanwhile. */
export function takeEarlyTermination(): boolean {
  const record = heldTerms()
  record.stop?.()
  record.stop = undefined
  const came = record.count > 0
  record.count = 0
  return came
}
