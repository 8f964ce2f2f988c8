import { createInterface, type Interface } from 'node:readline'
import { type Context, Service } from 'cordis'
import type { ApprovalContext, ApprovalOutcome, ApprovalRequest, ApprovalService } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { normalizeApprovalOutcome } from '../runtime/index.js'
import { previewJson } from './preview.js'

export { normalizeApprovalOutcome }

/** Config of {@link CallbackApproval}. */
export interface CallbackApprovalConfig {
  /**
   * Decide one request (plain JSON). Asynchronous deciders should observe `context.signal`
   * (the service awaits the answer; it never abandons it).
   */
  decide(request: ApprovalRequest, context: ApprovalContext): ApprovalOutcome | PromiseLike<ApprovalOutcome>
}

/**
 * Programmatic approval for tests and servers: provides the `approval`
 * service and answers every request through `config.decide`. A throwing or rejecting
 * decider, or a malformed answer, becomes a denial; `request()` never rejects.
 *
 * Usage: `ctx.plugin(CallbackApproval, { decide: (request) => ({ kind: 'allowed-once' }) })`.
 */
export class CallbackApproval extends Service implements ApprovalService {
  private readonly decide: CallbackApprovalConfig['decide']

  constructor(ctx: Context, config: CallbackApprovalConfig) {
    super(ctx, 'approval')
    if (typeof config?.decide !== 'function') {
      throw new ConfigError('CallbackApproval config.decide', 'expected a function (request) => ApprovalOutcome')
    }
    this.decide = config.decide
  }

  async request(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalOutcome> {
    try {
      return normalizeApprovalOutcome(await this.decide(request, context))
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return Object.freeze({ kind: 'denied', reason: `the approval callback failed: ${message}` })
    }
  }
}

/**
 * The readable side {@link TerminalApproval} reads answers from (`process.stdin`, a socket, a
 * `PassThrough`). Structural, so the declarations need no Node type package.
 */
export interface ApprovalInputStream {
  readonly isTTY?: boolean
  on(event: string, listener: (...args: unknown[]) => void): unknown
}

/** The writable side {@link TerminalApproval} asks on (`process.stdout`, a stream). */
export interface ApprovalOutputStream {
  readonly isTTY?: boolean
  write(text: string): unknown
}

/** Config of {@link TerminalApproval}. */
export interface TerminalApprovalConfig {
  /** Where answers are read from (a Node readable stream). Default `process.stdin`. */
  readonly input?: ApprovalInputStream
  /** Where questions are written (a Node writable stream). Default `process.stdout`. */
  readonly output?: ApprovalOutputStream
  /** Override TTY detection (default: `input.isTTY === true`). */
  readonly interactive?: boolean
}

interface PendingQuestion {
  readonly request: ApprovalRequest
  readonly signal: AbortSignal
  readonly resolve: (outcome: ApprovalOutcome) => void
  readonly onAbort: () => void
}

const NO_TTY_REASON = 'no interactive terminal to ask for approval'

/**
 * Interactive approval: provides the `approval` service and asks on the
 * terminal. It shows the tool, the agent, the reason and the (previewed) JSON arguments
 * and asks `y/N`; only `y`/`yes` allows, once. Questions are serialized — one at a time,
 * in request order — and a line typed ahead with the previous answer never answers the
 * next question (nothing is approved unseen). Without a TTY every request is
 * denied with a reason. A call cancelled while waiting (or queued) is answered `cancelled`;
 * closed input denies what is pending.
 *
 * Usage: `ctx.plugin(TerminalApproval)` or `ctx.plugin(TerminalApproval, { input, output })`.
 */
export class TerminalApproval extends Service implements ApprovalService {
  private readonly input: NodeJS.ReadableStream
  private readonly output: NodeJS.WritableStream
  private readonly interactive: boolean
  private readonly colors: boolean
  private readonly queue: PendingQuestion[] = []
  private active: PendingQuestion | undefined
  private reader: Interface | undefined
  private closedReason: string | undefined

  constructor(ctx: Context, config: TerminalApprovalConfig = {}) {
    super(ctx, 'approval')
    if (config === null || typeof config !== 'object')
      throw new ConfigError('TerminalApproval config', 'expected an object')
    // The structural config types describe Node streams; readline needs the nominal ones.
    this.input = (config.input as NodeJS.ReadableStream | undefined) ?? process.stdin
    this.output = (config.output as NodeJS.WritableStream | undefined) ?? process.stdout
    if (typeof this.input.on !== 'function')
      throw new ConfigError('TerminalApproval config.input', 'expected a readable stream')
    if (typeof this.output.write !== 'function') {
      throw new ConfigError('TerminalApproval config.output', 'expected a writable stream')
    }
    this.interactive = config.interactive ?? (this.input as { isTTY?: boolean }).isTTY === true
    this.colors = (this.output as { isTTY?: boolean }).isTTY === true && !process.env.NO_COLOR
    ctx.effect(() => () => this.shutdown('the approval service was disposed'))
  }

  request(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalOutcome> {
    const name = request.toolName
    if (!this.interactive) {
      this.write(
        `${this.paint('33', '?')} approval needed for ${name}${reasonSuffix(request)} — denied: ${NO_TTY_REASON}\n`,
      )
      return Promise.resolve(Object.freeze({ kind: 'denied', reason: NO_TTY_REASON }))
    }
    if (this.closedReason !== undefined) {
      return Promise.resolve(Object.freeze({ kind: 'denied', reason: this.closedReason }))
    }
    const signal = context.signal
    if (signal.aborted) return Promise.resolve(cancelled())
    return new Promise<ApprovalOutcome>((resolve) => {
      const question: PendingQuestion = { request, signal, resolve, onAbort: () => this.cancel(question) }
      signal.addEventListener('abort', question.onAbort, { once: true })
      this.queue.push(question)
      this.pump()
    })
  }

  private pump(): void {
    if (this.active !== undefined) return
    const question = this.queue.shift()
    if (question === undefined) {
      this.closeReader()
      return
    }
    this.active = question
    this.openReader()
    const { toolName, callId, agentId, reason } = question.request
    const who = agentId === null ? 'no agent' : `agent ${agentId}`
    const lines = [`${this.paint('33;1', '?')} ${this.paint('1', `approve ${toolName}`)} (call ${callId}, ${who})`]
    if (reason) lines.push(`  reason:    ${reason}`)
    lines.push(`  arguments: ${previewJson(question.request.arguments, 1000)}`)
    this.write(`${lines.join('\n')}\n  allow once? [y/N] `)
  }

  private onLine(line: string): void {
    const question = this.active
    if (question === undefined) return // type-ahead: never approve a question that was not shown
    const answer = line.trim().toLowerCase()
    if (answer === 'y' || answer === 'yes') this.finish(question, Object.freeze({ kind: 'allowed-once' }))
    else this.finish(question, Object.freeze({ kind: 'denied', reason: 'declined at the terminal' }))
  }

  private cancel(question: PendingQuestion): void {
    if (question === this.active) {
      this.write(`${this.paint('2', '(cancelled)')}\n`)
      this.finish(question, cancelled())
      return
    }
    const at = this.queue.indexOf(question)
    if (at >= 0) this.queue.splice(at, 1)
    question.resolve(cancelled())
  }

  private finish(question: PendingQuestion, outcome: ApprovalOutcome): void {
    question.signal.removeEventListener('abort', question.onAbort)
    if (this.active === question) this.active = undefined
    question.resolve(outcome)
    // Show the next question on a later turn: further lines of the chunk that carried this
    // answer were typed before it was shown, and must not answer it.
    setImmediate(() => this.pump())
  }

  /** Deny everything pending and refuse further questions (input closed or service disposed). */
  private shutdown(reason: string): void {
    this.closedReason ??= reason
    this.closeReader()
    const pending = this.active ? [this.active, ...this.queue] : [...this.queue]
    this.active = undefined
    this.queue.length = 0
    for (const question of pending) {
      question.signal.removeEventListener('abort', question.onAbort)
      question.resolve(Object.freeze({ kind: 'denied', reason }))
    }
  }

  private openReader(): void {
    if (this.reader !== undefined) return
    // `terminal: false`: plain line reading; the TTY's own line discipline echoes input.
    const reader = createInterface({ input: this.input, terminal: false })
    reader.on('line', (line) => this.onLine(line))
    reader.on('close', () => {
      if (this.reader !== reader) return // we closed it ourselves when idle
      this.reader = undefined
      this.write('\n')
      this.shutdown('the approval input was closed')
    })
    this.reader = reader
  }

  /** Close when idle so an open prompt never keeps the process alive. */
  private closeReader(): void {
    const reader = this.reader
    this.reader = undefined
    reader?.close()
  }

  private write(text: string): void {
    try {
      this.output.write(text)
    } catch {
      // A broken output must not turn into an approval; the outcome still resolves.
    }
  }

  private paint(code: string, text: string): string {
    return this.colors ? `\x1b[${code}m${text}\x1b[0m` : text
  }
}

function cancelled(): ApprovalOutcome {
  return Object.freeze({ kind: 'cancelled', reason: 'the call was cancelled while waiting for approval' })
}

function reasonSuffix(request: ApprovalRequest): string {
  return request.reason ? ` (${request.reason})` : ''
}
