import type {
  ApprovalAnswerSource,
  ApprovalContext,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  StandingApprovalRule,
  ToolExecution,
  ToolExecutionResult,
} from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { snapshotJsonValue } from '../json/index.js'
import { getJsonSchemaValidator } from '../schema/validator.js'
import { ToolDeniedError, ToolSuspendedError } from './errors.js'
import { observe } from './observe.js'
import type { RegistryCore } from './registry.js'
import { describeThrown, failure, failureFrom } from './results.js'
import type { Scope } from './scope.js'
import { describeValue, readOwn, UNREADABLE, warnContained } from './untrusted.js'

const KINDS: ReadonlySet<string> = new Set([
  'allowed-once',
  'allowed-always',
  'denied',
  'denied-always',
  'suspended',
  'cancelled',
])

/**
 * Turn whatever an approver answered into a well-formed, frozen outcome. Anything that is not a
 * contract kind is a denial (fail closed). Edited `arguments` of an `allowed-once` are snapshotted
 * when they are lossless JSON and otherwise kept as given, for the pipeline to refuse as
 * `INVALID_ARGS` (an edit is never dropped, which would run the original arguments).
 */
export function normalizeApprovalOutcome(value: unknown): ApprovalOutcome {
  return normalize(value).outcome
}

interface Normalized {
  readonly outcome: ApprovalOutcome
  /** Set when an `allowed-once` carried edited arguments that are not lossless JSON. */
  readonly invalidArguments?: string
}

function normalize(value: unknown): Normalized {
  if (value === null || typeof value !== 'object') {
    return { outcome: Object.freeze({ kind: 'denied', reason: 'the approval service returned no outcome' }) }
  }
  // Each field read once, defensively: a throwing getter is an unsupported outcome, not a throw.
  const kind = readOwn(value, 'kind')
  const reason = readOwn(value, 'reason')
  if (typeof kind !== 'string' || !KINDS.has(kind)) {
    const shown =
      typeof kind === 'string'
        ? `"${kind}"`
        : kind === UNREADABLE
          ? '(its kind could not be read)'
          : describeValue(kind)
    return { outcome: Object.freeze({ kind: 'denied', reason: `unsupported approval outcome ${shown}` }) }
  }
  const out: { kind: string; reason?: string; arguments?: JsonValue; decidedBy?: string } = { kind }
  if (typeof reason === 'string') out.reason = reason
  const decidedBy = readOwn(value, 'decidedBy')
  if (typeof decidedBy === 'string') out.decidedBy = decidedBy
  let invalidArguments: string | undefined
  if (kind === 'allowed-once') {
    const edited = readOwn(value, 'arguments')
    if (edited === UNREADABLE) invalidArguments = 'outcome.arguments: could not be read (reading it threw)'
    else if (edited !== undefined) {
      try {
        out.arguments = snapshotJsonValue(edited, 'outcome.arguments')
      } catch (error) {
        invalidArguments = describeThrown(error)
        // Kept as given: dropping it would turn an edit into permission for the original arguments.
        out.arguments = edited as JsonValue
      }
    }
  }
  return { outcome: Object.freeze(out) as ApprovalOutcome, invalidArguments }
}

/** Standing rules by scope, then tool name. A scope's rules end with it. */
const standing = new WeakMap<Scope, Map<string, StandingApprovalRule>>()

/** The standing rules of one scope, in installation order. */
export function standingRulesOf(scope: Scope): StandingApprovalRule[] {
  const rules = standing.get(scope)
  return rules === undefined ? [] : [...rules.values()]
}

/** Remove one scope's standing rule for `toolName`; true when there was one. */
export function revokeStandingRule(scope: Scope, toolName: string): boolean {
  return standing.get(scope)?.delete(toolName) ?? false
}

function installStandingRule(scope: Scope, rule: StandingApprovalRule): void {
  let rules = standing.get(scope)
  if (rules === undefined) {
    rules = new Map()
    standing.set(scope, rules)
    const agentCtx = scope.agent?.ctx
    if (agentCtx !== undefined) {
      // The rules end with the agent scope: disposing the agent drops them.
      try {
        agentCtx.effect(() => () => standing.delete(scope), 'toolgate standing approval rules')
      } catch {
        // An agent already being disposed: its rules go with the WeakMap entry.
      }
    }
  }
  rules.delete(rule.toolName) // re-insert so the listing stays in installation order
  rules.set(rule.toolName, Object.freeze(rule))
}

/** The plain-JSON request: exactly the documented fields, frozen; live objects travel in the context. */
function buildRequest(exec: ToolExecution, reason: string | undefined): ApprovalRequest {
  return Object.freeze({
    callId: exec.callId,
    rootCallId: exec.rootCallId,
    parentCallId: exec.parentCallId,
    agentId: exec.agent?.id ?? null,
    toolName: exec.name,
    arguments: exec.arguments,
    reason: reason ?? null,
  })
}

const disposedWhileAsking: unique symbol = Symbol('disposed while asking')

/** What the approval step decided for one ask. */
export type ApprovalVerdict =
  | { readonly proceed: true; readonly exec: ToolExecution }
  | { readonly proceed: false; readonly result: ToolExecutionResult; readonly suspended?: ApprovalRequest }

/** The call being asked about, with the host's per-call decision and approval channel. */
export interface AskedCall {
  readonly exec: ToolExecution
  /** A decision the host made for this call (a resumed turn): used once, then cleared. */
  decision: ApprovalOutcome | undefined
  /** The host's approval service for this call, answering before the context's `approval` service. */
  readonly approval: ApprovalService | undefined
  /** A nested call whose suspension the enclosing program keeps (else a nested suspension is a denial). */
  readonly durable?: boolean
}

/** An answer, or the refusal that ends the ask before any answer exists. */
type Answer =
  | { readonly source: ApprovalAnswerSource; readonly normalized: Normalized }
  | { readonly refused: ApprovalVerdict }

/**
 * One `ask`: a decision the host handed to this call, else a standing rule of the call's scope, else
 * the approval service answers. Only `allowed-once` / `allowed-always` proceed; every other path is an
 * error result whose message says why. Never rejects.
 */
export async function askApproval(
  core: RegistryCore,
  scope: Scope,
  call: AskedCall,
  definition: ToolDefinition,
  reason: string | undefined,
): Promise<ApprovalVerdict> {
  const exec = call.exec
  const request = buildRequest(exec, reason)
  if (core.hasHooks('tools/approval-asked')) observe(core, scope, 'tools/approval-asked', [request, exec])
  const answer = await answerAsk(core, scope, call, request, reason)
  if ('refused' in answer) return answer.refused
  const { source, normalized } = answer
  const outcome = await settleOutcome(core, scope, exec, normalized.outcome, source, call.durable === true)
  if (core.hasHooks('tools/approval-answered')) {
    // Observers (the journal) get JSON only: edited arguments that are not JSON are left out.
    const observed =
      normalized.invalidArguments === undefined
        ? outcome
        : Object.freeze(
            outcome.reason === undefined ? { kind: outcome.kind } : { kind: outcome.kind, reason: outcome.reason },
          )
    observe(core, scope, 'tools/approval-answered', [request, observed, source, exec])
  }
  if (normalized.invalidArguments !== undefined) {
    return {
      proceed: false,
      result: failure(`Invalid edited arguments for tool "${exec.name}": ${normalized.invalidArguments}`, {
        name: 'ToolArgsError',
        code: 'INVALID_ARGS',
      }),
    }
  }
  return verdictOf(core, exec, definition, request, outcome, source, reason)
}

/** Who answers, in order: the host's decision, a standing rule, the call's or the context's service. */
async function answerAsk(
  core: RegistryCore,
  scope: Scope,
  call: AskedCall,
  request: ApprovalRequest,
  reason: string | undefined,
): Promise<Answer> {
  const exec = call.exec
  const decision = call.decision
  if (decision !== undefined) {
    call.decision = undefined
    return { source: 'decision', normalized: normalize(decision) }
  }
  const rule = standing.get(scope)?.get(exec.name) ?? (await storedRule(core, exec))
  if (rule !== undefined) {
    const outcome = Object.freeze(rule.reason === null ? { kind: rule.kind } : { kind: rule.kind, reason: rule.reason })
    return { source: 'standing', normalized: { outcome } }
  }
  const asked = reason ? ` (asked because: ${reason})` : ''
  const service =
    call.approval ??
    ((exec.agent?.ctx.get('approval', false) ?? core.ctx.get('approval', false)) as ApprovalService | undefined)
  if (typeof service?.request !== 'function') {
    return refused(core, scope, request, exec, {
      kind: 'denied',
      reason: `approval was required${asked}, but no approval service is available`,
    })
  }
  const context: ApprovalContext = Object.freeze({ signal: exec.signal, agent: exec.agent, execution: exec })
  try {
    // Disposal cuts a pending question short: the pipeline then reports the call as aborted.
    const answer = await core.lifetime.untilHalted(scope, service.request(request, context), disposedWhileAsking)
    if (answer === disposedWhileAsking) {
      return refused(core, scope, request, exec, {
        kind: 'cancelled',
        reason: 'the runtime or agent was disposed while approval was pending',
      })
    }
    return { source: 'service', normalized: normalize(answer) }
  } catch (error) {
    return refused(core, scope, request, exec, {
      kind: 'denied',
      reason: `approval was required${asked}, but the approval service failed: ${describeThrown(error)}`,
    })
  }
}

/**
 * The installed standing store's rule for this call's agent and tool. A store that fails or answers
 * something else than a rule is logged and has no rule: the approval service is asked.
 */
async function storedRule(
  core: RegistryCore,
  exec: ToolExecution,
): Promise<Pick<StandingApprovalRule, 'kind' | 'reason'> | undefined> {
  const store = core.standingStore
  if (store === undefined) return undefined
  let rule: unknown
  try {
    rule = await store.find(exec.agent?.id ?? null, exec.name)
  } catch (error) {
    warnContained(core, `the standing approval store failed to look up "${exec.name}"; asking instead`, error)
    return undefined
  }
  if (rule === undefined || rule === null) return undefined
  const kind = readOwn(rule, 'kind')
  if (kind !== 'allowed-always' && kind !== 'denied-always') {
    core.logger.warn(
      'the standing approval store answered a rule of kind %s for "%s"; asking instead',
      describeValue(kind),
      exec.name,
    )
    return undefined
  }
  const reason = readOwn(rule, 'reason')
  return { kind, reason: typeof reason === 'string' ? reason : null }
}

/** A sub-call cannot suspend; an `-always` answer installs its standing rule. */
async function settleOutcome(
  core: RegistryCore,
  scope: Scope,
  exec: ToolExecution,
  answered: ApprovalOutcome,
  source: ApprovalAnswerSource,
  durable: boolean,
): Promise<ApprovalOutcome> {
  let outcome = answered
  if (outcome.kind === 'suspended' && exec.parent !== undefined && !durable) {
    // Only a program that keeps a replay log can wait across a restart: re-running any other would
    // repeat its finished sub-calls.
    outcome = Object.freeze({
      kind: 'denied',
      reason: `approval was suspended${outcome.reason ? ` (${outcome.reason})` : ''}, but a Code Mode sub-call cannot wait for a later decision`,
    })
  }
  if ((outcome.kind === 'allowed-always' || outcome.kind === 'denied-always') && source !== 'standing') {
    const rule: StandingApprovalRule = {
      agentId: exec.agent?.id ?? null,
      toolName: exec.name,
      kind: outcome.kind,
      reason: outcome.reason ?? null,
      callId: exec.callId,
      createdAt: Date.now(),
    }
    const store = core.standingStore
    let kept = false
    if (store !== undefined) {
      // Kept before the call goes on, so that every instance reading the store applies it from now.
      try {
        await store.keep(Object.freeze({ ...rule }))
        kept = true
      } catch (error) {
        warnContained(
          core,
          `the standing approval store failed to keep the rule for "${exec.name}"; kept in memory`,
          error,
        )
      }
    }
    if (!kept) installStandingRule(scope, rule)
  }
  return outcome
}

function verdictOf(
  core: RegistryCore,
  exec: ToolExecution,
  definition: ToolDefinition,
  request: ApprovalRequest,
  outcome: ApprovalOutcome,
  source: ApprovalAnswerSource,
  reason: string | undefined,
): ApprovalVerdict {
  switch (outcome.kind) {
    case 'allowed-always':
      return { proceed: true, exec }
    case 'allowed-once':
      return outcome.arguments === undefined
        ? { proceed: true, exec }
        : edited(core, exec, definition, outcome.arguments)
    case 'suspended': {
      const why = outcome.reason ? `: ${outcome.reason}` : ''
      return {
        proceed: false,
        result: failureFrom(
          new ToolSuspendedError(exec.name, `${reason ?? 'approval required'}${why}`),
          'APPROVAL_SUSPENDED',
        ),
        suspended: request,
      }
    }
    default:
      return { proceed: false, result: denial(exec, outcome, source) }
  }
}

function refused(
  core: RegistryCore,
  scope: Scope,
  request: ApprovalRequest,
  exec: ToolExecution,
  outcome: ApprovalOutcome,
): Answer {
  return { refused: refuse(core, scope, request, exec, 'service', outcome) }
}

function refuse(
  core: RegistryCore,
  scope: Scope,
  request: ApprovalRequest,
  exec: ToolExecution,
  source: ApprovalAnswerSource,
  outcome: ApprovalOutcome,
): ApprovalVerdict {
  const frozen = Object.freeze(outcome)
  if (core.hasHooks('tools/approval-answered')) {
    observe(core, scope, 'tools/approval-answered', [request, frozen, source, exec])
  }
  return {
    proceed: false,
    result: failureFrom(new ToolDeniedError(exec.name, frozen.reason ?? 'denied'), 'TOOL_DENIED'),
  }
}

function denial(exec: ToolExecution, outcome: ApprovalOutcome, source: ApprovalAnswerSource): ToolExecutionResult {
  const because = outcome.reason ? `: ${outcome.reason}` : ''
  let text: string
  if (outcome.kind === 'denied') text = `the approval service denied the call${because}`
  else if (outcome.kind === 'denied-always') {
    text =
      source === 'standing'
        ? `a standing rule denies every call of this tool${because}`
        : `the approval service denied this and every later call of this tool${because}`
  } else if (outcome.kind === 'cancelled') text = `the call was cancelled while waiting for approval${because}`
  else text = `the approval service answered ${outcome.kind}${because}`
  return failureFrom(new ToolDeniedError(exec.name, text), 'TOOL_DENIED')
}

/** `allowed-once` with edited arguments: the call continues with them, validated again first. */
function edited(core: RegistryCore, exec: ToolExecution, definition: ToolDefinition, args: JsonValue): ApprovalVerdict {
  let violations: string[] = []
  try {
    violations = getJsonSchemaValidator(definition.parameters as never).validate(args, 'arguments')
  } catch {
    // A raw tool whose parameter dialect the validator does not enforce validates its own arguments.
  }
  if (violations.length > 0) {
    const list = violations.map((v) => `\n  - ${v}`).join('')
    return {
      proceed: false,
      result: failure(
        `Invalid edited arguments for tool "${exec.name}" (${violations.length} violation${violations.length === 1 ? '' : 's'}):${list}`,
        { name: 'ToolArgsError', code: 'INVALID_ARGS' },
      ),
    }
  }
  const next: ToolExecution = Object.freeze({ ...exec, arguments: args })
  const live = core.live.get(exec.token)
  if (live !== undefined) live.exec = next
  return { proceed: true, exec: next }
}
