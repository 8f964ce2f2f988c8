// Issue 40, item 2 (last bullet), for authenticated callers: a kept program is its caller's. The
// keeper seals the caller's identity into the turn and resumes the program under that identity's
// own scope; a client that named its program (`_meta["toolgate/program"]`) waits for it again only
// as the same identity, and another identity's same name reaches nothing of it. Also: a sub-call
// asked again under the id of one whose decision was spent fails the program clearly instead of
// leaving it waiting forever.
import { afterEach, describe, expect, it } from 'vitest'
import type {
  ApprovalRequest,
  ToolExecuteOptions,
  ToolExecutionInput,
  ToolExecutionResult,
} from '../../src/contract/execution.js'
import { namedProgramTurnId } from '../../src/gateway/program-keeper.js'
import { authInfoFor, type Identity } from '../../src/mcp/protocol/identity.js'
import {
  agentOf,
  closeKeeperFixtures,
  type ExecuteProgram,
  keeperOver,
  tempFileStore,
  until,
} from './keeper-fixture.js'

afterEach(closeKeeperFixtures)

const KEY = new TextEncoder().encode('program-keeper-owner-key-0123456789')
const alice: Identity = { subject: 'alice', groups: ['dev'], scopes: ['mcp:tools'], claims: { iss: 'https://as.test' } }
const bob: Identity = { subject: 'bob', groups: ['dev'], scopes: ['mcp:tools'], claims: { iss: 'https://as.test' } }

/** A program that waits on sub-call B until B is decided, then ends: what ran, and as whom. */
function fakeProgram(options: { askAgain?: boolean } = {}) {
  const ran: { callId: string; agent: string | undefined }[] = []
  const execute = async (input: ToolExecutionInput, o: ToolExecuteOptions): Promise<ToolExecutionResult> => {
    const b: ApprovalRequest = {
      callId: `${input.callId}:code:2`,
      rootCallId: input.callId,
      parentCallId: input.callId,
      agentId: input.agent?.id ?? null,
      toolName: 'guarded',
      arguments: { n: 2 },
      reason: null,
    }
    if (options.askAgain || o.program?.decisions[b.callId] === undefined) {
      o.onSuspended?.(b, { waiting: [b], log: { v: 1 } })
      return {
        isError: true,
        error: { message: 'suspended', info: { name: 'Error', code: 'APPROVAL_SUSPENDED' } },
      } as never
    }
    ran.push({ callId: input.callId, agent: input.agent?.id })
    return { isError: false, value: `done for ${input.agent?.id}`, content: [] } as never
  }
  return { ran, execute }
}

function setup(execute: ExecuteProgram) {
  const store = tempFileStore('keeper-owner')
  const said: string[] = []
  const make = () => keeperOver(store, KEY, execute, (line: string) => void said.push(line))
  return { store, said, make }
}

const input = (callId: string, agent: string, signal: AbortSignal): ToolExecutionInput => ({
  callId,
  name: 'run_code',
  arguments: { code: 'await tools.guarded({ n: 2 })', description: 'b' },
  agent: agentOf(agent),
  signal,
})

describe('kept programs belong to their caller (issue 40, item 2)', () => {
  it("resumes under the owner's scope; only the owner waits for its named program again", async () => {
    const { ran, execute } = fakeProgram()
    const { store, said, make } = setup(execute)
    const first = make()
    const gone = new AbortController()
    const asAlice = { authInfo: authInfoFor(alice, 'tok-a'), programId: 'report-1' }
    expect(first.keeps('run_code', undefined, asAlice.authInfo)).toBe(true)
    const waiting = first.run(
      input('p1', 'toolgate/alice', gone.signal),
      {},
      (o) => execute(input('p1', 'toolgate/alice', gone.signal), o),
      asAlice,
    )
    const turnId = namedProgramTurnId(alice, 'report-1')
    const pending = await until(
      async () => (await store.pendingCalls()).find((c) => c.turnId === turnId),
      'the kept turn',
    )
    expect(pending.agentId).toBe('toolgate/alice')
    // The client goes (its instance died): it was told the program waits.
    gone.abort()
    expect(await waiting).toMatchObject({ isError: true, error: { info: { code: 'APPROVAL_SUSPENDED' } } })
    first.close()

    // "After the restart": a new keeper over the same store.
    const second = make()
    // Bob names his program the same: he reaches nothing of Alice's; his call runs as his own program.
    const bobCall = new AbortController()
    const bobs = second.run(
      input('p2', 'toolgate/bob', bobCall.signal),
      {},
      (o) => execute(input('p2', 'toolgate/bob', bobCall.signal), o),
      { authInfo: authInfoFor(bob, 'tok-b'), programId: 'report-1' },
    )
    const bobTurn = namedProgramTurnId(bob, 'report-1')
    expect(bobTurn).not.toBe(turnId)
    await until(async () => (await store.pendingCalls()).find((c) => c.turnId === bobTurn), "bob's own turn")
    // Alice, on a new connection, waits for her program again by its name.
    const aliceAgain = second.run(
      input('p3', 'toolgate/alice', new AbortController().signal),
      {},
      () => {
        throw new Error('a named program that is kept must not run again')
      },
      asAlice,
    )
    await until(
      () =>
        said.some((line) => line.includes(`waits again for the run_code program kept in turn ${turnId}`))
          ? true
          : undefined,
      'the attach',
    )
    expect((await store.decide(turnId, pending.callId, { kind: 'allowed-once' })).applied).toBe(true)
    const result = await aliceAgain
    expect(result).toMatchObject({ isError: false, value: 'done for toolgate/alice' })
    // Resumed as Alice's scope, once; Bob's program still waits, untouched.
    expect(ran).toEqual([{ callId: 'p1', agent: 'toolgate/alice' }])
    expect((await store.pendingCalls()).map((c) => c.turnId)).toEqual([bobTurn])
    // A later retry by Alice gets the recorded result without running anything.
    expect(
      await second.run(
        input('p4', 'toolgate/alice', new AbortController().signal),
        {},
        () => {
          throw new Error('must not run')
        },
        asAlice,
      ),
    ).toMatchObject({ isError: false, value: 'done for toolgate/alice' })
    // The same name with another program is refused, not confused with the kept one.
    const other = await second.run(
      {
        ...input('p5', 'toolgate/alice', new AbortController().signal),
        arguments: { code: 'return 1', description: 'x' },
      },
      {},
      () => {
        throw new Error('must not run')
      },
      asAlice,
    )
    expect(other).toMatchObject({ isError: true, error: { info: { code: 'PROGRAM_ID_TAKEN' } } })
    bobCall.abort()
    await bobs
  })

  it('a turn whose owner was edited does not verify: nobody waits for it, nothing runs', async () => {
    const { ran, execute } = fakeProgram()
    const { store, said, make } = setup(execute)
    const keeper = make()
    const gone = new AbortController()
    const waiting = keeper.run(
      input('p1', 'toolgate/alice', gone.signal),
      {},
      (o) => execute(input('p1', 'toolgate/alice', gone.signal), o),
      {
        authInfo: authInfoFor(alice, 'tok-a'),
        programId: 'mine',
      },
    )
    const turnId = namedProgramTurnId(alice, 'mine')
    await until(async () => (await store.pendingCalls()).find((c) => c.turnId === turnId), 'the kept turn')
    gone.abort()
    await waiting
    // Someone with write access to the store, but not the state key, copies Alice's turn under
    // Bob's name for it, as Bob's.
    const state = structuredClone((await store.loadTurn(turnId))?.state) as { owner: { subject: string } }
    state.owner.subject = 'bob'
    const stolen = namedProgramTurnId(bob, 'mine')
    await store.saveTurn(stolen, state as never)
    const asBob = await keeper.run(
      input('p2', 'toolgate/bob', new AbortController().signal),
      {},
      () => {
        throw new Error('must not run')
      },
      { authInfo: authInfoFor(bob, 'tok-b'), programId: 'mine' },
    )
    expect(asBob).toMatchObject({ isError: true, error: { info: { code: 'PROGRAM_NOT_KEPT' } } })
    expect(JSON.stringify(asBob)).not.toContain('alice')
    const pending = (await store.pendingCalls()).find((c) => c.turnId === stolen)
    expect((await store.decide(stolen, pending?.callId ?? '', { kind: 'allowed-once' })).applied).toBe(true)
    await until(
      () => (said.some((l) => l.includes(`program turn ${stolen} is not sealed`)) ? true : undefined),
      'the refusal',
    )
    expect(ran).toEqual([])
  })

  it('a sub-call asked again after its decision was spent fails the program, logged, instead of hanging', async () => {
    const { execute } = fakeProgram({ askAgain: true })
    const { store, said, make } = setup(execute)
    const keeper = make()
    const call = new AbortController()
    const result = keeper.run(input('p1', 'toolgate', call.signal), {}, (o) =>
      execute(input('p1', 'toolgate', call.signal), o),
    )
    const pending = await until(async () => (await store.pendingCalls())[0], 'the kept turn')
    expect((await store.decide(pending.turnId, pending.callId, { kind: 'allowed-once' })).applied).toBe(true)
    const failed = await result
    expect(failed).toMatchObject({ isError: true, error: { info: { code: 'APPROVAL_ASKED_AGAIN' } } })
    expect(JSON.stringify(failed)).toContain(pending.callId)
    expect(said.some((line) => line.includes(`sub-call ${pending.callId} (guarded) asked for approval again`))).toBe(
      true,
    )
    // Nothing is left to decide: the turn is closed.
    expect(await store.pendingCalls()).toEqual([])
    expect((await store.loadTurn(pending.turnId))?.closed).toBe(true)
  })
})
