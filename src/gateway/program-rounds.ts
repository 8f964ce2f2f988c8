// Kept gateway programs for MCP 2026-07-28 clients, which hold no connection: a run_code program
// that pauses on sub-call approvals is kept in the store by the keeper (program-keeper.ts) and the
// call answers at once, naming the kept turn; the client's retry (on any instance with the store)
// records its decisions on that turn and wakes the keepers, one of which claims the decision and
// re-runs the program from its replay log. The retry waits for the turn to change: closed (the
// program's result, sealed into the turn) or kept again on the program's next approvals.
import type { ApprovalRequest, ToolExecutionResult } from '../contract/execution.js'
import { identityOf, type KeptAnswers, type KeptPause, type KeptProgramRounds, type KeptRound } from '../mcp/gateway.js'
import { canonicalJson, sealVerifies } from '../providers/state-seal.js'
import type { Log } from './log.js'
import { ownerKey, ownerOf, type ProgramKeeper, type ProgramState, type ProgramTurns } from './program-keeper.js'

/** How often a retry looks at its turn when the store does not say it changed. */
const LOOK_MS = 250
/** With a store that pushes turn changes, looking is only the fallback. */
const WATCHED_LOOK_MS = 2_000

export function createProgramRounds(deps: {
  keeper: ProgramKeeper
  store: ProgramTurns
  key: Uint8Array
  log: Log
}): KeptProgramRounds {
  const { keeper, store, key, log } = deps

  /** The turn's state when it is a kept program sealed under this gateway's key. */
  const programOf = (state: unknown): ProgramState | undefined =>
    typeof state === 'object' &&
    state !== null &&
    (state as { kind?: unknown }).kind === 'gateway-program' &&
    sealVerifies(state as Record<string, unknown>, key)
      ? (state as ProgramState)
      : undefined

  /** Until the turn has moved past `answered` (closed, or waiting for other sub-calls), or `signal` aborts. */
  async function nextRound(turnId: string, answered: ReadonlySet<string>, signal: AbortSignal): Promise<KeptRound> {
    let wake: (() => void) | undefined
    const unwatch = store.watchTurns?.(() => wake?.())
    try {
      for (;;) {
        const turn = await store.loadTurn(turnId)
        const state = programOf(turn?.state)
        if (turn === undefined || state === undefined)
          return { result: failure(`the program kept in turn ${turnId} is gone from the store`, 'PROGRAM_NOT_KEPT') }
        if (turn.closed)
          return {
            result:
              state.result === undefined
                ? failure(`the program kept in turn ${turnId} ended; its result is in the journal`, 'PROGRAM_ENDED')
                : (state.result as unknown as ToolExecutionResult),
          }
        const waiting = state.program.waiting
        if (waiting.length > 0 && waiting.every((r) => !answered.has(r.callId))) return { paused: { turnId, waiting } }
        if (signal.aborted)
          return {
            result: failure(
              `the client stopped waiting; the program kept in turn ${turnId} goes on, its result will be in the journal`,
              'APPROVAL_SUSPENDED',
            ),
          }
        await new Promise<void>((done) => {
          const timer = setTimeout(finish, unwatch === undefined ? LOOK_MS : WATCHED_LOOK_MS)
          function finish() {
            clearTimeout(timer)
            signal.removeEventListener('abort', finish)
            wake = undefined
            done()
          }
          wake = finish
          signal.addEventListener('abort', finish, { once: true })
        })
      }
    } finally {
      unwatch?.()
    }
  }

  return {
    keeps: (name, agent, authInfo) => keeper.keeps(name, agent, authInfo),
    async run(input, options, run, call) {
      let paused: KeptPause | undefined
      const result = await keeper.run(input, options, run, {
        ...call,
        onKept: (pause) => {
          paused = pause
        },
      })
      return paused === undefined ? { result } : { paused }
    },
    async answer(answers: KeptAnswers) {
      const { turnId, calls, decisions } = answers
      const turn = await store.loadTurn(turnId)
      if (turn === undefined) return { refused: 'its program is not kept in the store' }
      const state = programOf(turn.state)
      if (state === undefined) {
        log.info(`a retry named program turn ${turnId}, which does not verify under this gateway's state key`)
        return { refused: "its program's kept turn does not verify" }
      }
      // The seal of the requestState already bound the caller; the turn's own owner must agree.
      const caller = JSON.stringify(ownerKey(ownerOf(identityOf(answers.authInfo))))
      if (JSON.stringify(ownerKey(state.owner ?? null)) !== caller)
        return { refused: 'its program was kept for another caller' }
      if (canonicalJson(state.call.arguments) !== canonicalJson(answers.arguments ?? {}))
        return { refused: 'it was issued for other arguments' }
      if (turn.closed) return { refused: 'its program has already finished' }
      const waiting = state.program.waiting.map((r: ApprovalRequest) => r.callId)
      if (waiting.length !== calls.length || waiting.some((id) => !calls.includes(id)))
        return { refused: 'its program no longer waits for these approvals' }
      for (const callId of calls) {
        const decided = await store.decide(turnId, callId, decisions[callId])
        // Decided meanwhile in the viewer: that decision stands, and the program continues on it.
        if (!decided.applied)
          log.info(
            `program turn ${turnId}: the client's decision for sub-call ${callId} was not recorded (${decided.reason}); the recorded one stands`,
          )
      }
      keeper.wake()
      return nextRound(turnId, new Set(calls), answers.signal)
    },
  }
}

/** A failed result of the program's own call. */
const failure = (message: string, code: string): ToolExecutionResult =>
  ({
    isError: true,
    error: { message, info: { name: 'Error', code } },
    content: [{ type: 'text', text: message }],
  }) as unknown as ToolExecutionResult
