// `serve --store` with a state key: a Code Mode program whose sub-call asks for approval, on a
// connection whose client cannot be asked, waits for an approver in the viewer instead of being
// denied. Its replay log is saved, sealed, as a turn in the store, with the waiting sub-calls as the
// turn's pending calls (so the viewer lists and decides them). Every instance looks at the store's
// open program turns when the store says a turn changed (PostgreSQL's LISTEN/NOTIFY), and polls as
// a fallback; once a waiting sub-call is decided, the instance that wins the claim on that
// decision re-runs the program from its log: finished sub-calls answer from the log, the decided
// one runs, and the result goes to the client that is still waiting on this instance, and always
// to the journal.
import { randomUUID } from 'node:crypto'
import type {
  Agent,
  ApprovalOutcome,
  ApprovalRequest,
  ApprovalService,
  ProgramSuspension,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { Store } from '../journal/store.js'
import { identityOf } from '../mcp/identity.js'
import type { McpCallKeeper } from '../mcp/server.js'
import type { AuthInfo } from '../mcp/wire-types.js'
import { sealVerifies, stateSeal } from '../providers/state-seal.js'
import type { Log } from './log.js'

/** Turns of kept programs are saved under ids with this prefix. */
export const PROGRAM_TURN_PREFIX = 'gateway-program:'
const PROGRAM_TOOL = 'run_code'
/** How often an instance looks for decided program turns (one query, plus one per open program). */
const POLL_MS = 500
/** With a store that pushes turn changes (PostgreSQL's LISTEN/NOTIFY), polling is only the fallback. */
const WATCHED_POLL_MS = 10_000

interface ProgramState extends Record<string, unknown> {
  readonly v: 1
  readonly kind: 'gateway-program'
  readonly agentId: null
  readonly call: { readonly callId: string; readonly name: string; readonly arguments: JsonValue }
  readonly pending: { readonly calls: readonly JsonValue[]; readonly requests: readonly ApprovalRequest[] }
  readonly program: ProgramSuspension
  readonly seal?: string
}

export interface ProgramKeeper extends McpCallKeeper {
  close(): void
}

type Execute = (input: ToolExecutionInput, options: ToolExecuteOptions) => Promise<ToolExecutionResult>

/** Sub-calls wait (their approval suspends); the program's own call keeps its approval service. */
function suspendingSubCalls(fallback: ApprovalService | undefined): ApprovalService {
  return {
    request: async (request, context): Promise<ApprovalOutcome> => {
      if (request.parentCallId !== undefined)
        return { kind: 'suspended', reason: 'waits for an approver in the viewer' }
      return fallback === undefined
        ? { kind: 'denied', reason: 'nobody can be asked' }
        : fallback.request(request, context)
    },
  }
}

const waitingResult = (turnId: string): ToolExecutionResult =>
  ({
    isError: true,
    error: {
      message: `the program waits for an approver in the viewer (turn ${turnId}); its result will be in the journal`,
      info: { code: 'APPROVAL_SUSPENDED' },
    },
  }) as unknown as ToolExecutionResult

export function createProgramKeeper(deps: {
  store: Store
  key: Uint8Array
  execute: Execute
  agent: Agent
  log: Log
  /** Until the journal's records so far are committed (the store journal's `flush`). */
  flush: () => Promise<void>
  /** How often to poll the store's turns (default: 500 ms, or 10 s when the store pushes changes). */
  pollMs?: number
}): ProgramKeeper {
  const { store, key, execute, agent, log, flush } = deps
  // Clients still waiting on this instance, by turn id; turns this instance is resuming now.
  const waiters = new Map<string, (result: ToolExecutionResult) => void>()
  const busy = new Set<string>()
  const refused = new Set<string>()
  const stopping = new AbortController()

  const seal = (state: ProgramState): ProgramState => ({ ...state, seal: stateSeal(state, key) })
  const stateOf = (call: ProgramState['call'], program: ProgramSuspension): ProgramState =>
    seal({
      v: 1,
      kind: 'gateway-program',
      agentId: null,
      call,
      pending: {
        calls: program.waiting.map((r) => ({
          callId: r.callId,
          name: r.toolName,
          arguments: r.arguments as JsonValue,
        })),
        requests: program.waiting,
      },
      program,
    })

  /** Run (or re-run) the program; a pause is saved under `turnId` and answered by `undefined`. */
  async function runKept(
    input: ToolExecutionInput,
    options: ToolExecuteOptions,
    turnId: string,
    dispatch: (options: ToolExecuteOptions) => Promise<ToolExecutionResult>,
  ): Promise<ToolExecutionResult | undefined> {
    let paused: ProgramSuspension | undefined
    const result = await dispatch({
      ...options,
      approval: suspendingSubCalls(options.approval),
      onSuspended: (_request, program) => {
        paused = program
      },
    })
    if (paused === undefined) return result
    const call = { callId: input.callId, name: input.name, arguments: input.arguments as JsonValue }
    // The viewer offers a call only once the journal shows it asking: its records are committed
    // before the turn lists it as pending, or a crash in between would leave it undecidable.
    await flush()
    await store.saveTurn(turnId, stateOf(call, paused) as unknown as JsonValue)
    log.info(`a run_code program waits for an approver in the viewer (turn ${turnId})`)
    return undefined
  }

  async function resume(turnId: string): Promise<void> {
    const turn = await store.loadTurn(turnId)
    if (turn === undefined || turn.closed) return
    const state = turn.state as unknown as ProgramState
    if (typeof state !== 'object' || state === null || !sealVerifies(state, key)) {
      if (!refused.has(turnId))
        log.info(`program turn ${turnId} is not sealed with this gateway's state key: left alone`)
      refused.add(turnId)
      return
    }
    const decided = state.program.waiting.filter((r) => turn.decisions[r.callId] !== undefined)
    if (decided.length === 0) return
    // One instance resumes each decision: the claim is taken on the recorded decision itself.
    const first = decided[0]
    const claim = await store.claim(
      {
        turnId,
        agentId: null,
        callId: first.callId,
        toolName: first.toolName,
        arguments: first.arguments as JsonValue,
      },
      { turnId, kind: turn.decisions[first.callId].kind },
    )
    if (!claim.won) return
    const decisions = Object.fromEntries(decided.map((r) => [r.callId, turn.decisions[r.callId]]))
    const input: ToolExecutionInput = {
      callId: state.call.callId,
      name: state.call.name,
      arguments: state.call.arguments,
      agent,
      signal: stopping.signal,
    }
    const options = { program: { log: state.program.log, decisions }, storedTurnId: turnId }
    const result = await runKept(input, options, turnId, (o) => execute(input, o))
    if (result === undefined) return
    await store.closeTurn(turnId)
    const waiter = waiters.get(turnId)
    if (waiter !== undefined) waiter(result)
    else log.info(`a kept run_code program finished (turn ${turnId}); its result is in the journal`)
  }

  async function poll(): Promise<void> {
    const turns = new Set(
      (await store.pendingCalls()).filter((c) => c.turnId.startsWith(PROGRAM_TURN_PREFIX)).map((c) => c.turnId),
    )
    for (const turnId of turns) {
      if (busy.has(turnId) || refused.has(turnId)) continue
      busy.add(turnId)
      try {
        await resume(turnId)
      } catch (error) {
        log.info(`could not resume program turn ${turnId}: ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        busy.delete(turnId)
      }
    }
  }

  // One poll at a time: a slow store never piles polls up; a change during a poll polls again after it.
  let polling = false
  let again = false
  const tick = () => {
    if (polling) {
      again = true
      return
    }
    polling = true
    poll()
      .catch((error: unknown) => log.debug(`program turns: ${String(error)}`))
      .finally(() => {
        polling = false
        if (again && !stopping.signal.aborted) {
          again = false
          tick()
        }
      })
  }
  const unwatch = store.watchTurns?.(tick)
  const timer = setInterval(tick, deps.pollMs ?? (unwatch === undefined ? POLL_MS : WATCHED_POLL_MS))
  timer.unref()
  tick()

  return {
    keeps: (name: string, _agent: Agent | undefined, authInfo: AuthInfo | undefined) =>
      // An identity's program would resume under the gateway's own scope: only anonymous callers.
      name === PROGRAM_TOOL && identityOf(authInfo) === undefined,
    async run(input, options, run) {
      const turnId = `${PROGRAM_TURN_PREFIX}${randomUUID()}`
      const result = await runKept(input, options, turnId, run).catch((error: unknown) => {
        log.info(`a paused program could not be kept in the store: ${String(error)}`)
        return waitingResult(turnId)
      })
      if (result !== undefined) return result
      return new Promise<ToolExecutionResult>((resolve) => {
        const done = (value: ToolExecutionResult) => {
          waiters.delete(turnId)
          input.signal?.removeEventListener('abort', aborted)
          resolve(value)
        }
        const aborted = () => done(waitingResult(turnId))
        waiters.set(turnId, done)
        input.signal?.addEventListener('abort', aborted, { once: true })
      })
    },
    close() {
      clearInterval(timer)
      unwatch?.()
      stopping.abort()
    },
  }
}
