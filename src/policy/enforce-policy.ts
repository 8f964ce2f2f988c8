// A compiled policy installed on a context (the library's root or an agent, the gateway's serving
// agent): a pre-execute listener decides each call, Code Mode sub-calls included; an around-dispatch
// wrapper counts quotas (refusing with QUOTA_EXCEEDED), keeps the turn's tool counts and applies deadlines.
import type { Context } from 'cordis'
import type {
  Agent,
  ToolExecution,
  ToolExecutionFailure,
  ToolExecutionResult,
  ToolExecutionToken,
} from '../contract/execution.js'
import { directListener, ToolTimeoutError } from '../runtime/index.js'
import type { CompiledPolicy, PolicyCall, PolicyDecision, PolicyQuotaCheck } from './compile-policy.js'
import type { PolicyIdentity } from './policy-document.js'
import { type QuotaCounter, windowOf } from './quota-counter.js'
import { QuotaExceededError } from './quota-exceeded-error.js'

/** How a host installs a policy. */
export interface EnforcePolicyOptions {
  /** Who a call's agent acts for (the library: the agent's `identity`; the gateway: its caller). */
  readonly identityOf: (agent: Agent | undefined) => PolicyIdentity | undefined
  /** Where quota counts live. */
  readonly quotas: QuotaCounter
  /** Names the policy never refuses (the gateway's `run_code` and `search_tools`: their sub-calls are decided). */
  readonly exempt?: (name: string) => boolean
  /** Apply `timeoutMs` deadlines here (the gateway applies them itself). Default true. */
  readonly deadlines?: boolean
  /** The clock for quota windows (tests). */
  readonly now?: () => number
}

/** A policy installed on a context. */
export interface PolicyEnforcement {
  readonly policy: CompiledPolicy
  /** The decision taken for a call in flight or just settled (by its token), for the journal. */
  decisionOf(token: ToolExecutionToken): PolicyDecision | undefined
  /** Decide without calling or counting; a used-up quota answers `quota`. */
  explain(call: PolicyCall): Promise<PolicyDecision>
  /** Count quotas in `counter` from now on (the gateway's store, once it is open). */
  useQuotas(counter: QuotaCounter): void
  /** Remove the listeners. */
  dispose(): void
}

/** The most turns whose tool counts are kept (the oldest go first). */
const MAX_TURNS = 10_000

/** Install `policy` on `ctx`'s scope. */
export function enforcePolicyDocument(
  ctx: Context,
  policy: CompiledPolicy,
  options: EnforcePolicyOptions,
): PolicyEnforcement {
  const now = options.now ?? Date.now
  const decisions = new WeakMap<ToolExecutionToken, PolicyDecision>()
  // The calls being dispatched, for a sub-call's parent tool and depth.
  const running = new Map<string, { readonly name: string; readonly depth: number }>()
  const turns = new Map<string, Map<string, number>>()
  const applyDeadlines = options.deadlines ?? true
  let quotas = options.quotas

  const callOf = (exec: ToolExecution): PolicyCall => {
    const parent = exec.parentCallId === null ? undefined : running.get(exec.parentCallId)
    const turn = turns.get(exec.rootCallId)
    return {
      tool: exec.name,
      args: exec.arguments,
      identity: options.identityOf(exec.agent),
      ...(parent
        ? { parentTool: parent.name, depth: parent.depth + 1 }
        : { depth: exec.parentCallId === null ? 0 : 1 }),
      ...(turn ? { turn: Object.fromEntries(turn) } : {}),
    }
  }

  // Not async: an allowed call hands on the next listener's own promise (no frame of its own per call).
  const offPre = ctx.on(
    'tools/pre-execute',
    directListener((exec, next) => {
      if (options.exempt?.(exec.name)) return next()
      const decision = policy.decide(callOf(exec))
      decisions.set(exec.token, decision)
      if (decision.decision === 'deny')
        return Promise.resolve({ kind: 'deny', reason: decision.reason ?? 'the policy denies it' } as const)
      if (decision.decision !== 'ask') return next()
      return Promise.resolve(next()).then((later) =>
        later.kind === 'allow' ? ({ kind: 'ask', reason: decision.reason } as const) : later,
      )
    }),
  )

  // A policy without `when` never reads a call's parent or turn: nothing to keep for them, and a call
  // without quotas or a deadline goes straight on.
  const tracks = policy.conditional
  const deadlineOf = (decision: PolicyDecision) => applyDeadlines && decision.deadlineMs !== undefined
  const offExecute = ctx.on(
    'tools/execute',
    directListener((exec, next) => {
      const decision = decisions.get(exec.token)
      if (!tracks && (decision === undefined || (decision.quotas.length === 0 && !deadlineOf(decision)))) return next()
      return dispatch(exec, next, decision)
    }),
  )

  const dispatch = async (
    exec: ToolExecution,
    next: () => Promise<ToolExecutionResult>,
    decision: PolicyDecision | undefined,
  ): Promise<ToolExecutionResult> => {
    // Only a call that runs counts: the guards and asks before this point refused without counting,
    // and a quota used up gives back what the call's earlier quotas counted.
    const counted: { check: PolicyQuotaCheck; start: number; ms: number }[] = []
    for (const check of decision?.quotas ?? []) {
      const window = windowOf(check.quota, now())
      const counter = quotas
      const taken = await counter.take(check.key, window.start, window.ms, check.quota.calls)
      if (taken) counted.push({ check, start: window.start, ms: window.ms })
      else {
        for (const { check: earlier, start, ms } of counted)
          await counter.refund(earlier.key, start, ms, earlier.quota.calls).catch(() => {})
        const error = new QuotaExceededError(
          exec.name,
          check.rule.label,
          check.quota.calls,
          check.quota.per,
          window.left,
        )
        const refused: ToolExecutionFailure = {
          isError: true,
          error: {
            message: error.message,
            info: { name: error.name, code: error.code, rule: check.rule.label, retryAfterMs: window.left },
          },
          content: [{ type: 'text', text: error.message }],
        }
        return refused
      }
    }
    // Cancelled before its body starts: it will not run, so it does not count.
    if (exec.signal.aborted && counted.length > 0)
      for (const { check, start, ms } of counted)
        await quotas.refund(check.key, start, ms, check.quota.calls).catch(() => {})
    // The turn's counts: a call counts once it is dispatched.
    let turn = turns.get(exec.rootCallId)
    if (turn === undefined) {
      if (turns.size >= MAX_TURNS) turns.delete(turns.keys().next().value as string)
      turn = new Map()
      turns.set(exec.rootCallId, turn)
    }
    turn.set(exec.name, (turn.get(exec.name) ?? 0) + 1)
    const parent = exec.parentCallId === null ? undefined : running.get(exec.parentCallId)
    running.set(exec.callId, { name: exec.name, depth: parent ? parent.depth + 1 : exec.parentCallId === null ? 0 : 1 })
    try {
      const ms = applyDeadlines ? decision?.deadlineMs : undefined
      if (ms === undefined || exec.signal.aborted) return await next()
      return await withDeadline(exec, ms, next)
    } finally {
      running.delete(exec.callId)
    }
  }

  const explain = async (call: PolicyCall): Promise<PolicyDecision> => {
    const decision = policy.decide(call)
    if (decision.decision === 'deny') return decision
    for (const check of decision.quotas) {
      const window = windowOf(check.quota, now())
      const used = await quotas.peek(check.key, window.start)
      if (used >= check.quota.calls)
        return Object.freeze({
          ...decision,
          decision: 'quota' as const,
          rule: check.rule,
          reason: `the quota of ${check.rule.label} (${check.quota.calls} calls per ${check.quota.per}) is used up`,
          retryAfterMs: window.left,
        })
    }
    return decision
  }

  return Object.freeze({
    policy,
    decisionOf: (token: ToolExecutionToken) => decisions.get(token),
    explain,
    useQuotas(counter: QuotaCounter) {
      quotas = counter
    },
    dispose() {
      offPre()
      offExecute()
    },
  })
}

/** Run `next` with a deadline of `ms` on `exec.signal`; past it, the call's result is TOOL_TIMEOUT. */
export async function withDeadline(
  exec: { name: string; signal: AbortSignal },
  ms: number,
  next: () => Promise<ToolExecutionResult>,
): Promise<ToolExecutionResult> {
  const timeout = new ToolTimeoutError(exec.name, ms)
  const previous = exec.signal
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(timeout), ms)
  exec.signal = AbortSignal.any([previous, deadline.signal])
  let result: ToolExecutionResult
  try {
    result = await next()
  } finally {
    clearTimeout(timer)
    exec.signal = previous
  }
  if (!deadline.signal.aborted || previous.aborted) return result
  return {
    isError: true,
    error: { message: timeout.message, info: { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT', timeoutMs: ms } },
    content: [{ type: 'text', text: timeout.message }],
  }
}
