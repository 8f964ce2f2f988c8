// The replay log of a paused `run_code` program: every sub-call it asked for, in order, with what
// it drew from the clock, Math.random and crypto.getRandomValues before asking, and the outcome of each one that finished.
// A resume re-runs the program against it: finished sub-calls answer from the log, the waiting
// ones run with their decisions, and a program that asks for anything else has diverged.
import { createHash } from 'node:crypto'
import type { ApprovalRequest } from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { CodeBindingOutcome } from './code-runtime.js'

/** One sub-call the program asked for. */
export interface ReplayEntry {
  readonly name: string
  readonly args: JsonValue
  /** The clock readings and random numbers the program drew just before asking (see CodeDraws). */
  readonly draws: readonly number[]
  /** A finished sub-call: what the program got, and when it got it among the finished ones. */
  readonly outcome?: CodeBindingOutcome
  readonly order?: number
  /** A sub-call that waits for an approval decision. */
  readonly waiting?: true
}

export interface ReplayLog {
  readonly v: 1
  /** SHA-256 of the program's text: a log replays only the program that wrote it. */
  readonly program: string
  readonly calls: readonly ReplayEntry[]
}

/** What a paused program hands the host: its log and the requests of its waiting sub-calls. */
export interface PausedProgram {
  readonly log: ReplayLog
  readonly waiting: readonly ApprovalRequest[]
}

export function programDigest(code: string): string {
  return createHash('sha256').update(code).digest('hex')
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function isOutcome(value: unknown): value is CodeBindingOutcome {
  if (!isObject(value)) return false
  if (value.ok === true) return 'value' in value
  return value.ok === false && typeof value.toolName === 'string' && typeof value.message === 'string'
}

/**
 * The problems of a log read back from a state (path-qualified under `at`): its shape, and whether
 * it belongs to `code`. None: the log can be replayed. A log resumed with decisions must have a
 * sub-call that waits for one; a log saved while the program ran (`onProgramLog`) has none.
 */
export function replayLogIssues(raw: unknown, code: unknown, at: string, waits = true): string[] {
  if (!isObject(raw)) return [`${at}: expected the replay log of a paused program`]
  if (raw.v !== 1) return [`${at}.v: expected 1, got ${JSON.stringify(raw.v)}`]
  if (typeof code !== 'string' || raw.program !== programDigest(code))
    return [`${at}.program: the log was written by another program than this call's code`]
  if (!Array.isArray(raw.calls)) return [`${at}.calls: expected an array`]
  const issues: string[] = []
  const orders = new Set<number>()
  let waiting = 0
  raw.calls.forEach((entry: unknown, i) => {
    const where = `${at}.calls[${i}]`
    if (!isObject(entry) || typeof entry.name !== 'string' || !('args' in entry) || !Array.isArray(entry.draws)) {
      issues.push(`${where}: expected { name, args, draws }`)
      return
    }
    if (!entry.draws.every((n) => typeof n === 'number' && Number.isFinite(n)))
      issues.push(`${where}.draws: expected finite numbers`)
    if (entry.waiting === true) {
      waiting++
      if (entry.outcome !== undefined) issues.push(`${where}: a waiting sub-call cannot also have an outcome`)
    } else if (entry.outcome !== undefined) {
      if (!isOutcome(entry.outcome)) issues.push(`${where}.outcome: expected a sub-call outcome`)
      if (typeof entry.order !== 'number' || !Number.isInteger(entry.order) || orders.has(entry.order))
        issues.push(`${where}.order: expected a unique integer`)
      else orders.add(entry.order)
    }
  })
  if (issues.length === 0 && waits && waiting === 0) issues.push(`${at}.calls: no sub-call waits for a decision`)
  if (issues.length === 0 && [...orders].some((order) => order < 0 || order >= orders.size))
    issues.push(`${at}.calls: the finished sub-calls' order is not 0..${orders.size - 1}`)
  return issues
}
