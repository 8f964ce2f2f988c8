// Program keepers over a journal file store in a temporary folder, made as the gateway makes them
// for authenticated callers: a caller's program runs in the scope `toolgate/<subject>`. A test file
// calls `afterEach(closeKeeperFixtures)` to close what it made and remove the folders.
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
