import { type Context, Service } from 'cordis'
import type { ApprovalContext, ApprovalOutcome, ApprovalRequest, ApprovalService } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { normalizeApprovalOutcome } from '../runtime/index.js'

/** Config of {@link SuspendingApproval}. */
export interface SuspendingApprovalConfig {
  /**
   * Answer what can be answered at once (a policy, a cache); `undefined` suspends the call. A
   * throwing or rejecting `decide` is a denial (fail closed). Default: suspend every ask.
   */
  readonly decide?: (
    request: ApprovalRequest,
    context: ApprovalContext,
  ) => ApprovalOutcome | undefined | PromiseLike<ApprovalOutcome | undefined>
  /** Shown to the model and the journal as the suspension's reason. */
  readonly reason?: string
}

/**
 * An approval service that never waits: it answers an ask it has no decision for by
 * suspending that call. `runModelLoop` then finishes whatever else in the batch can finish and
 * returns `stopReason: 'approval-required'` with the serializable `pending` requests and a plain-JSON
 * `state`; `resumeModelLoop({ state, decisions, … })` — in this process or another one — applies the
 * decisions and continues. Outside the model loop a suspended call is an `APPROVAL_SUSPENDED` error
 * result.
 *
 * Usage: `ctx.plugin(SuspendingApproval)` or `ctx.plugin(SuspendingApproval, { decide })`.
 */
export class SuspendingApproval extends Service implements ApprovalService {
  private readonly decide: SuspendingApprovalConfig['decide']
  private readonly suspension: ApprovalOutcome

  constructor(ctx: Context, config: SuspendingApprovalConfig = {}) {
    super(ctx, 'approval')
    if (config === null || typeof config !== 'object')
      throw new ConfigError('SuspendingApproval config', 'expected an object')
    if (config.decide !== undefined && typeof config.decide !== 'function') {
      throw new ConfigError(
        'SuspendingApproval config.decide',
        'expected a function (request, context) => outcome | undefined',
      )
    }
    if (config.reason !== undefined && typeof config.reason !== 'string') {
      throw new ConfigError('SuspendingApproval config.reason', 'expected a string')
    }
    this.decide = config.decide
    this.suspension = Object.freeze(
      config.reason === undefined ? { kind: 'suspended' } : { kind: 'suspended', reason: config.reason },
    )
  }

  async request(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalOutcome> {
    if (this.decide === undefined) return this.suspension
    try {
      const answer = await this.decide(request, context)
      return answer === undefined ? this.suspension : normalizeApprovalOutcome(answer)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return Object.freeze({ kind: 'denied', reason: `the approval callback failed: ${message}` })
    }
  }
}
