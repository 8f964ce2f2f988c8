// Issue 40, item 2: on one instance, a named program is judged exactly as across instances (see
// gateway-programs-race.test.ts for two processes on PostgreSQL). Calls that name one program while
// it runs wait for that run; other code under the name is PROGRAM_ID_TAKEN; a program that ends
// without pausing has its result sealed into its turn, so a later call with the name answers it
// and runs nothing. An unnamed program creates no turn.
import { afterEach, describe, expect, it } from 'vitest'
import type { ToolExecuteOptions, ToolExecutionInput, ToolExecutionResult } from '../../src/contract/execution.js'
import { namedProgramTurnId } from '../../src/gateway/program-keeper.js'
import { takeProgramName } from '../../src/gateway/program-name.js'
import { authInfoFor, type Identity } from '../../src/mcp/protocol/identity.js'
import { agentOf, closeKeeperFixtures, keeperOver, tempFileStore } from './keeper-fixture.js'

afterEach(closeKeeperFixtures)

const KEY = new TextEncoder().encode('program-name-test-key-0123456789')
const alice: Identity = { subject: 'alice', groups: [], scopes: ['mcp:tools'], claims: { iss: 'https://as.test' } }

function setup() {
  const store = tempFileStore('program-name')
  // Each run holds until the test lets it end: the calls below all arrive while it runs.
  let release: () => void = () => {}
  const held = new Promise<void>((done) => {
    release = done
  })
  const runs: string[] = []
  const execute = async (input: ToolExecutionInput, _o: ToolExecuteOptions): Promise<ToolExecutionResult> => {
    runs.push((input.arguments as { code: string }).code)
    await held
    return { isError: false, value: `ran ${(input.arguments as { code: string }).code}`, content: [] } as never
  }
  const keeper = keeperOver(store, KEY, execute)
  let n = 0
  const call = (code: string, programId?: string) => {
    const input: ToolExecutionInput = {
      callId: `c${++n}`,
      name: 'run_code',
      arguments: { code, description: 'd' },
      agent: agentOf('toolgate/alice'),
      signal: new AbortController().signal,
    }
    return keeper.run(input, {}, (o) => execute(input, o), {
      authInfo: authInfoFor(alice, 'tok'),
      ...(programId === undefined ? {} : { programId }),
    })
  }
  return { store, runs, release, call }
}

describe('a named program is one run, on one instance too (issue 40, item 2)', () => {
  it('calls naming a running program wait for it; other code is refused; a later call answers its result', async () => {
    const { store, runs, release, call } = setup()
    const first = call('return 1', 'nightly')
    const second = call('return 1', 'nightly')
    const other = await call('return 2', 'nightly')
    expect(other).toMatchObject({ isError: true, error: { info: { code: 'PROGRAM_ID_TAKEN' } } })
    const turnId = namedProgramTurnId(alice, 'nightly')
    expect(await store.loadTurn(turnId)).toMatchObject({ closed: false })
    release()
    const [a, b] = await Promise.all([first, second])
    expect(a).toMatchObject({ isError: false, value: 'ran return 1' })
    expect(b).toEqual(a)
    expect(runs).toEqual(['return 1'])
    // Ended without pausing: the result is in the closed turn, and a later call answers it.
    expect(await store.loadTurn(turnId)).toMatchObject({ closed: true, state: { result: { value: 'ran return 1' } } })
    expect(await call('return 1', 'nightly')).toMatchObject({ isError: false, value: 'ran return 1' })
    expect(runs).toEqual(['return 1'])
    // An unnamed program runs each time and creates no turn.
    await Promise.all([call('return 3'), call('return 3')])
    expect(runs).toEqual(['return 1', 'return 3', 'return 3'])
    expect(await store.pendingCalls()).toEqual([])
  })

  it('takeProgramName: the first call creates the turn; the others get the turn that holds the name', async () => {
    const { store } = setup()
    const takes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => takeProgramName(store, 'gateway-program:named:x', { i })),
    )
    expect(takes.filter((t) => t.taken)).toHaveLength(1)
    const held = (await store.loadTurn('gateway-program:named:x'))?.state
    for (const t of takes) if (!t.taken) expect(t.turn.state).toEqual(held)
  })
})
