// The replay log a resumed program saves as it goes (see program-keeper.ts). Code Mode hands the
// host its log after each finished sub-call (`onProgramLog`); in a resume, a decided sub-call that
// has not finished yet has neither an outcome nor the `waiting` mark there (it runs). Saved as is,
// an instance taking the resume over would run it as a new sub-call, which asks for approval again
// though it was decided. So the saved log keeps the mark on each sub-call that waited in the log the
// resume started from and has not finished since: a taker runs it with its recorded decision.
import type { JsonValue } from '../contract/json-value.js'

type Entry = { readonly outcome?: unknown; readonly waiting?: unknown } & Record<string, unknown>

const callsOf = (log: unknown): readonly Entry[] | undefined => {
  const calls = (log as { calls?: unknown } | null)?.calls
  return Array.isArray(calls) ? (calls as Entry[]) : undefined
}

/** `progress` (a log Code Mode handed over during a resume from `base`), its unfinished decided sub-calls marked as waiting. */
export function resumeProgressLog(base: JsonValue, progress: JsonValue): JsonValue {
  const before = callsOf(base)
  const now = callsOf(progress)
  if (before === undefined || now === undefined) return progress
  const calls = now.map((entry, i) =>
    before[i]?.waiting === true && entry.outcome === undefined && entry.waiting !== true
      ? { ...entry, waiting: true }
      : entry,
  )
  return { ...(progress as Record<string, JsonValue>), calls } as JsonValue
}

/**
 * Whether a sub-call in `log` still waits for its decision: false only for a log whose decided
 * sub-calls all finished (a resume then passes no decisions: they were spent).
 */
export const logWaits = (log: JsonValue): boolean => callsOf(log)?.some((entry) => entry.waiting === true) ?? true

/** How many sub-calls of `log` finished (they answer from it when the program is re-run). */
export const finishedInLog = (log: JsonValue): number =>
  callsOf(log)?.filter((entry) => entry.outcome !== undefined).length ?? 0
