import { ToolgateError } from '../errors/toolgate-error.js'

/** A policy rule's quota is used up: the call was refused before its body, `retryAfterMs` says when to try again. */
export class QuotaExceededError extends ToolgateError {
  readonly code = 'QUOTA_EXCEEDED' as const
  /** Milliseconds until the rule's next window, when a call is allowed again. */
  readonly retryAfterMs: number
  /** The rule whose quota is used up (its `id`, or `rules[N]`). */
  readonly rule: string
  constructor(toolName: string, rule: string, calls: number, per: string, retryAfterMs: number, reason?: string) {
    const seconds = Math.ceil(retryAfterMs / 1000)
    super(
      `Tool "${toolName}" was refused: ${reason ?? `the quota of ${rule} (${calls} calls per ${per}) is used up`}; the next call is allowed in ${seconds} s`,
    )
    this.name = 'QuotaExceededError'
    this.retryAfterMs = retryAfterMs
    this.rule = rule
  }
}
