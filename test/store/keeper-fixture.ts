// Program keepers over a journal file store in a temporary folder, made as the gateway makes them
// for authenticated callers: a caller's program runs in the scope `toolgate/<subject>`. A test file
// calls `afterEach(closeKeeperFixtures)` to close what it made and remove the folders. Also what
// the keeper tests' stand-in programs share: their input and results, and a store that freezes.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type {
  Agent,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../../src/contract/execution.js'
import { createProgramKeeper, type ProgramKeeper } from '../../src/gateway/program-keeper.js'
import { createFileStore } from '../../src/journal/file-store.js'
import type { Store } from '../../src/journal/store.js'
import { until as waitUntil } from './until.js'

const dirs: string[] = []
const keepers: ProgramKeeper[] = []

/** Closes every keeper made here and removes every store folder (for `afterEach`). */
export async function closeKeeperFixtures(): Promise<void> {
  await stopKeepers()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** Stops every keeper made so far, once their interrupted runs gave their claims back; the stores stay. */
export async function stopKeepers(): Promise<void> {
  await Promise.all(keepers.splice(0).map((keeper) => keeper.close()))
}

/** An agent that is only its id (all the keeper reads of it). */
export const agentOf = (id: string) => ({ id }) as unknown as Agent

/** What runs a program: the keeper's `execute`. */
export type ExecuteProgram = (input: ToolExecutionInput, o: ToolExecuteOptions) => Promise<ToolExecutionResult>

/** A journal file store in a new folder `toolgate-<name>-…` under the system's temporary one. */
export function tempFileStore(name: string): Store {
  const dir = mkdtempSync(join(tmpdir(), `toolgate-${name}-`))
  dirs.push(dir)
  return createFileStore({ journal: join(dir, 'journal.jsonl') })
}

/** A keeper over `store` sealing with `key`, polling every 20 ms, its info lines to `info` (and its lease `leaseMs` long). */
export function keeperOver(
  store: Store,
  key: Uint8Array,
  execute: ExecuteProgram,
  info: (line: string) => void = () => {},
  leaseMs?: number,
): ProgramKeeper {
  const keeper = createProgramKeeper({
    store,
    key,
    execute,
    agent: agentOf('toolgate'),
    log: { info, debug: () => {} },
    flush: async () => {},
    pollMs: 20,
    scopeOf: (identity) => agentOf(`toolgate/${identity.subject}`),
    ...(leaseMs === undefined ? {} : { leaseMs }),
  })
  keepers.push(keeper)
  return keeper
}

/** until.ts's `until`, looking every 10 ms (the keepers here poll every 20 ms). */
export const until = <T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> =>
  waitUntil(check, what, { everyMs: 10 })

/** The input of a run_code call `p1` running `code`, on `signal`. */
export const runCodeInput =
  (code: string, description: string) =>
  (signal: AbortSignal): ToolExecutionInput => ({
    callId: 'p1',
    name: 'run_code',
    arguments: { code, description },
    signal,
  })

/** A successful result whose value is `text`. */
export const done = (text: string) => ({ isError: false, value: text, content: [] }) as unknown as ToolExecutionResult

/** Until the run's signal aborts (the keeper stopped, or lost its lease): then a cancelled call's answer. */
export const blocked = (runInput: ToolExecutionInput) =>
  new Promise<ToolExecutionResult>((resolve) => {
    runInput.signal?.addEventListener('abort', () =>
      resolve({ isError: true, error: { message: 'cancelled', info: { code: 'CANCELLED' } } } as never),
    )
  })

/**
 * `store`, but once frozen none of its calls ever answers: the store as a killed (or frozen)
 * process sees it. It counts the lease renewals the store granted.
 */
export function freezable(store: Store): { store: Store; freeze(): void; renewals(): number } {
  let frozen = false
  let renewals = 0
  const never = new Promise<never>(() => {})
  const wrapped = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (frozen) return never
        const answer = value.apply(target, args)
        if (prop === 'leaseTurn')
          void (answer as Promise<boolean>).then(
            (held) => {
              if (held) renewals++
            },
            () => {},
          )
        return answer
      }
    },
  })
  return {
    store: wrapped,
    freeze: () => {
      frozen = true
    },
    renewals: () => renewals,
  }
}

/** The program's sealed result once its turn is closed. */
export const resultOf = async (store: Store, turnId: string) => {
  const turn = await until(async () => {
    const loaded = await store.loadTurn(turnId)
    return loaded?.closed ? loaded : undefined
  }, 'the program to end')
  return (turn.state as { result?: unknown }).result
}
