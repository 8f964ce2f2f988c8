// Where `serve` over stdio keeps the run_code programs of an MCP 2026-07-28 client, whose approvals
// are input-required rounds the client answers by retrying: in the store when the store keeps
// programs (`--store` with $TOOLGATE_STATE_KEY_FILE, as the HTTP face does), otherwise in the
// process's memory under a per-process key. A stdio process lives exactly as long as its one
// client's session, and only that client can retry, so nothing is lost that the session needed.
import { randomBytes } from 'node:crypto'
import type { ModernStdioOptions } from '../mcp/gateway.js'
import type { Gateway } from './gateway.js'
import type { Log } from './log.js'
import { memoryTurns } from './memory-turns.js'
import { createProgramKeeper } from './program-keeper.js'
import { createProgramRounds } from './program-rounds.js'
import type { SharedState } from './serve-store.js'

/** The 2026 face's approval options for one stdio connection, and how to end what they hold. */
export interface StdioPrograms {
  readonly options: Pick<ModernStdioOptions, 'stateKey' | 'spentStates' | 'programs'>
  close(): void
}

export function stdioPrograms(
  gateway: Pick<Gateway, 'agent'> & { readonly identities?: Partial<Pick<Gateway['identities'], 'agentFor'>> },
  shared: Pick<SharedState, 'approvalStates'> | undefined,
  log: Log,
): StdioPrograms {
  const states = shared?.approvalStates
  if (states?.programs !== undefined) {
    const { key, spent, programs } = states
    // The store's keeper is the shared state's: it closes with the store.
    return { options: { ...(key === undefined ? {} : { stateKey: key }), spentStates: spent, programs }, close() {} }
  }
  const key = new Uint8Array(randomBytes(32))
  const turns = memoryTurns()
  const agentFor = gateway.identities?.agentFor?.bind(gateway.identities)
  const keeper = createProgramKeeper({
    store: turns,
    key,
    execute: (input, options) => gateway.agent.ctx.tools.execute(input, options),
    agent: gateway.agent,
    log,
    // No viewer reads these turns: nothing needs the journal committed before a turn is kept.
    flush: async () => {},
    // Nobody else sees these turns: the client's answer on its retry is what a program waits for.
    approver: "its client's answer (a retry of its run_code call)",
    ...(agentFor === undefined ? {} : { scopeOf: agentFor }),
  })
  log.debug("run_code programs that wait for this client's approvals are kept in this process's memory")
  return {
    options: {
      stateKey: key,
      // With a store (but no state key), a used approval state is still spent in the store.
      ...(states === undefined ? {} : { spentStates: states.spent }),
      programs: createProgramRounds({ keeper, store: turns, key, log }),
    },
    // Memory turns end with the process: no claim outlives it, so nothing is waited for.
    close: () => void keeper.close(),
  }
}
