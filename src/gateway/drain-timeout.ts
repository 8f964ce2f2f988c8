// `--drain-timeout`: its default and its check, and the exit code of a drain cut short. Apart from drain.ts, which loads the runtime, so
// that the flag check (which serve's early script runs before spawning) loads nothing more.

/** A second SIGTERM's exit code: 128 + 15, as for a process SIGTERM killed, since the drain did not finish. */
export const DRAIN_FORCED_EXIT_CODE = 143

/** `--drain-timeout` when not given, in seconds. */
export const DEFAULT_DRAIN_TIMEOUT_SECONDS = 30

/** `--drain-timeout SECONDS` read: a problem message when it is not a non-negative number of seconds. */
export function drainTimeoutProblem(text: string): string | undefined {
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(Number(text)) || Number(text) > 86_400)
    return `--drain-timeout: expected seconds (a number from 0 to 86400, e.g. 30), got "${text}"`
  return undefined
}
