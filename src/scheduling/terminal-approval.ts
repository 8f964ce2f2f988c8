import { createInterface, type Interface } from 'node:readline'
import type { ApprovalContext, ApprovalOutcome, ApprovalRequest } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { ApprovalInputStream, ApprovalOutputStream } from './approval.js'

/** Options of {@link terminalApproval}. */
export interface TerminalApprovalOptions {
  /** Where answers are read from (a Node readable stream). Default `process.stdin`. */
  readonly input?: ApprovalInputStream
  /** Where questions are written (a Node writable stream). Default `process.stdout`. */
  readonly output?: ApprovalOutputStream
  /**
   * Ask, or deny every request at once with a reason. Default: asks when `input` was given or
   * `process.stdin` is a TTY; so a CI job or a pipe without an `input` never waits for an answer.
   */
  readonly interactive?: boolean
  /** Longest shown text of one argument value, in characters (default 120; longer values are elided). */
  readonly maxValueChars?: number
}

/** The decider {@link terminalApproval} returns: for `createToolRuntime({ approval })` or `CallbackApproval`. */
export type TerminalApprovalDecider = (request: ApprovalRequest, context: ApprovalContext) => Promise<ApprovalOutcome>

const NO_TTY_REASON = 'no interactive terminal to ask for approval'
const MAX_KEYS = 20

interface Question {
  readonly request: ApprovalRequest
  readonly signal: AbortSignal
  readonly resolve: (outcome: ApprovalOutcome) => void
  readonly onAbort: () => void
  /** 'choice' until the person denies; then 'reason' for the one line that explains it. */
  phase: 'choice' | 'reason'
}

/**
 * Ask a person on a terminal: each request shows the tool, the agent, the reason and the
 * arguments folded (one line per argument, long values elided, control characters escaped), then
 * offers `[o]nce`, `[a]lways` (the runtime remembers it for later calls of that tool by that agent)
 * or `[d]eny`, which asks for a reason the model reads in its error. An empty answer denies.
 * Questions go one at a time, in request order; a line typed before a question was shown never
 * answers it. A call cancelled while waiting is answered `cancelled`; closed input denies what is
 * pending and every later request.
 *
 * Usage: `createToolRuntime({ approval: terminalApproval() })`, or in a test
 * `terminalApproval({ input: new PassThrough(), output })`.
 */
export function terminalApproval(options: TerminalApprovalOptions = {}): TerminalApprovalDecider {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('terminalApproval(options)', 'expected an object')
  const input = (options.input as NodeJS.ReadableStream | undefined) ?? process.stdin
  const output = options.output ?? process.stdout
  if (typeof input?.on !== 'function')
    throw new ConfigError('terminalApproval(options).input', 'expected a readable stream')
  if (typeof output?.write !== 'function')
    throw new ConfigError('terminalApproval(options).output', 'expected a writable stream')
  const maxChars = options.maxValueChars ?? 120
  if (!(Number.isSafeInteger(maxChars) && maxChars >= 8))
    throw new ConfigError(
      'terminalApproval(options).maxValueChars',
      `expected an integer of at least 8, got ${String(maxChars)}`,
    )
  const interactive = options.interactive ?? (options.input !== undefined || process.stdin.isTTY === true)

  const queue: Question[] = []
  let active: Question | undefined
  let reader: Interface | undefined
  let closedReason: string | undefined

  const write = (text: string): void => {
    try {
      output.write(text)
    } catch {
      // A broken output must not turn into an approval; the outcome still resolves.
    }
  }

  const finish = (question: Question, outcome: ApprovalOutcome): void => {
    question.signal.removeEventListener('abort', question.onAbort)
    if (active === question) active = undefined
    question.resolve(Object.freeze(outcome))
    // The next question shows on a later turn: further lines of the chunk that carried this
    // answer were typed before it was shown, and must not answer it.
    setImmediate(pump)
  }

  // A terminal echoes what the person types; a pipe does not, so the answer is written after its
  // prompt to keep the transcript readable (one question and its answer per line, not run together).
  const echo = (input as { isTTY?: boolean }).isTTY !== true

  const onLine = (line: string): void => {
    const question = active
    if (question === undefined) return
    if (echo) write(`${escapeText(line)}\n`)
    const answer = line.trim()
    if (question.phase === 'reason') {
      finish(question, {
        kind: 'denied',
        reason: answer === '' ? 'declined at the terminal' : `declined at the terminal: ${answer}`,
      })
      return
    }
    switch (answer.toLowerCase()) {
      case 'o':
      case 'once':
      case 'y':
      case 'yes':
        finish(question, { kind: 'allowed-once' })
        return
      case 'a':
      case 'always':
        finish(question, { kind: 'allowed-always', reason: 'allowed always at the terminal' })
        return
      case '':
        finish(question, { kind: 'denied', reason: 'declined at the terminal' })
        return
      case 'd':
      case 'deny':
      case 'n':
      case 'no':
        question.phase = 'reason'
        write('  reason for the model (optional): ')
        return
      default:
        write('  please answer o (once), a (always) or d (deny): ')
    }
  }

  const shutdown = (reason: string): void => {
    closedReason ??= reason
    closeReader()
    const pending = active ? [active, ...queue] : [...queue]
    active = undefined
    queue.length = 0
    for (const question of pending) {
      question.signal.removeEventListener('abort', question.onAbort)
      question.resolve(Object.freeze({ kind: 'denied', reason }))
    }
  }

  const openReader = (): void => {
    if (reader !== undefined) return
    // `terminal: false`: plain line reading; the TTY's own line discipline echoes input.
    const opened = createInterface({ input, terminal: false })
    opened.on('line', onLine)
    opened.on('close', () => {
      if (reader !== opened) return // closed by us when idle
      reader = undefined
      write('\n')
      shutdown('the approval input was closed')
    })
    reader = opened
  }

  /** Closed when idle, so an open prompt never keeps the process alive. */
  function closeReader(): void {
    const closing = reader
    reader = undefined
    closing?.close()
  }

  function pump(): void {
    if (active !== undefined) return
    const question = queue.shift()
    if (question === undefined) {
      closeReader()
      return
    }
    active = question
    openReader()
    write(`${describe(question.request, maxChars)}\n  allow [o]nce, [a]lways, or [d]eny? `)
  }

  const cancel = (question: Question): void => {
    if (question === active) {
      write('(cancelled)\n')
      finish(question, cancelled())
      return
    }
    const at = queue.indexOf(question)
    if (at >= 0) queue.splice(at, 1)
    question.resolve(cancelled())
  }

  return (request, context) => {
    if (!interactive) {
      write(`? approval needed for ${escapeText(request.toolName)} — denied: ${NO_TTY_REASON}\n`)
      return Promise.resolve(Object.freeze({ kind: 'denied', reason: NO_TTY_REASON }))
    }
    if (closedReason !== undefined) return Promise.resolve(Object.freeze({ kind: 'denied', reason: closedReason }))
    const signal = context.signal
    if (signal.aborted) return Promise.resolve(cancelled())
    return new Promise<ApprovalOutcome>((resolve) => {
      const question: Question = { request, signal, resolve, onAbort: () => cancel(question), phase: 'choice' }
      signal.addEventListener('abort', question.onAbort, { once: true })
      queue.push(question)
      pump()
    })
  }
}

function cancelled(): ApprovalOutcome {
  return Object.freeze({ kind: 'cancelled', reason: 'the call was cancelled while waiting for approval' })
}

/** The question's header and folded arguments, every untrusted piece escaped. */
function describe(request: ApprovalRequest, maxChars: number): string {
  const who = request.agentId === null ? 'no agent' : `agent ${escapeText(request.agentId)}`
  const lines = [`? approve ${escapeText(request.toolName)} (call ${escapeText(request.callId)}, ${who})`]
  if (request.reason) lines.push(`  reason: ${escapeText(request.reason)}`)
  const args: unknown = request.arguments
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
    const entries = Object.entries(args)
    if (entries.length === 0) lines.push('  arguments: none')
    else lines.push('  arguments:')
    for (const [key, value] of entries.slice(0, MAX_KEYS))
      lines.push(`    ${/^[\w$-]+$/.test(key) ? key : escapeJson(JSON.stringify(key))}: ${fold(value, maxChars)}`)
    if (entries.length > MAX_KEYS) lines.push(`    … ${entries.length - MAX_KEYS} more`)
  } else {
    lines.push(`  arguments: ${fold(args, maxChars)}`)
  }
  return lines.join('\n')
}

/** One value as at most `maxChars` of escaped JSON, with how much was left out. */
function fold(value: unknown, maxChars: number): string {
  const full = escapeJson(JSON.stringify(value) ?? String(value))
  if (full.length <= maxChars) return full
  const kept = full.slice(0, maxChars - 1)
  const what =
    typeof value === 'string'
      ? `${value.length.toLocaleString('en-US')} characters`
      : `${full.length.toLocaleString('en-US')} characters of JSON`
  return `${kept}… (${what}, elided)`
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: escaping terminal control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g

/** JSON text with the controls JSON.stringify leaves raw (DEL, C1, line separators) escaped too. */
function escapeJson(text: string): string {
  return text.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Untrusted plain text (a tool name, a reason) on one line, with no raw control character. */
function escapeText(text: string): string {
  return String(text).replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
