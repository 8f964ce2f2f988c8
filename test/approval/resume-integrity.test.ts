// Issue 22, "Who can run what": a resumed state runs only what was asked about — edits are refused
// (calls vs requests vs the stored assistant reply vs the journal), and a sealed state is verified.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ResumeStateError, resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { scriptedModel, setupTurn } from './loop-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-integrity-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const file = (name: string) => join(dir, `${n++}-${name}`)
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])

const KEY = 'a program-held secret of 32 bytes!'

// biome-ignore lint/suspicious/noExplicitAny: the test edits stored JSON at any depth, as an attacker would
type Json = Record<string, any>

async function suspendTurn(options: { journal?: string; stateKey?: string } = {}) {
  const marker = file('marker')
  const env = await setupTurn({ marker, journal: options.journal })
  const first = await runModelLoop({
    tools: env.tools,
    agent: env.agent,
    model: scriptedModel(),
    messages: [{ role: 'user', content: 'update the files' }],
    ...(options.stateKey !== undefined ? { stateKey: options.stateKey } : {}),
  })
  expect(first.stopReason).toBe('approval-required')
  const copy = (): Json => JSON.parse(JSON.stringify(first.state))
  const resume = (
    state: unknown,
    extra: {
      journal?: string
      stateKey?: string | Uint8Array
      decisions?: Record<string, { kind: 'allowed-once' }>
    } = {},
  ) =>
    resumeModelLoop({
      state,
      decisions: { call_b: { kind: 'allowed-once' }, call_c: { kind: 'allowed-once' } },
      tools: env.tools,
      agent: env.agent,
      model: scriptedModel(),
      ...extra,
    })
  return { ...env, marker, first, copy, resume }
}

/** Change call_b's arguments in the stored assistant reply (and the conversation's copy of it). */
function editReply(state: Json, args: Json): void {
  for (const message of [state.pending.reply[0], state.messages.at(-1)])
    message.tool_calls[1].function.arguments = JSON.stringify(args)
}

const EVIL = { path: '../../etc/passwd', text: 'pwned' }

describe('resume integrity: an edited state is refused before anything runs (issue 22)', () => {
  it('refuses a state whose pending.calls[i].arguments alone were edited', async () => {
    const { copy, resume, marker } = await suspendTurn()
    const state = copy()
    state.pending.calls[1].arguments = EVIL
    const refused = resume(state)
    await expect(refused).rejects.toThrow(ResumeStateError)
    await expect(refused).rejects.toThrow(
      /state\.pending\.calls\[1\]\.arguments: differ from the arguments in the stored/,
    )
    await expect(refused).rejects.toMatchObject({ code: 'INVALID_RESUME' })
    expect(lines(marker)).toEqual(['read:a.txt'])
  })

  it('refuses arguments or the tool edited consistently in both pending.calls and pending.requests', async () => {
    const { copy, resume, marker } = await suspendTurn()
    const args = copy()
    args.pending.calls[1].arguments = EVIL
    args.pending.requests[1].arguments = EVIL
    await expect(resume(args)).rejects.toThrow(
      /state\.pending\.calls\[1\]\.arguments: differ from the arguments in the stored assistant reply/,
    )
    const tool = copy()
    tool.pending.calls[0].name = 'write' // call_a completed as a read; pretend it was a write
    tool.pending.calls[2].name = 'read'
    tool.pending.requests[2].toolName = 'read'
    await expect(resume(tool)).rejects.toThrow(
      /state\.pending\.calls\[2\]\.name: "read", but the stored reply calls "write"/,
    )
    const requestOnly = copy()
    requestOnly.pending.requests[2].arguments = EVIL
    await expect(resume(requestOnly)).rejects.toThrow(
      /state\.pending\.requests\[2\]\.arguments: differ from state\.pending\.calls\[2\]\.arguments/,
    )
    const detached = copy()
    detached.messages.at(-1).content = 'something else'
    await expect(resume(detached)).rejects.toThrow(/state\.pending\.reply: is not the end of state\.messages/)
    expect(lines(marker)).toEqual(['read:a.txt'])
  })

  it('with the journal: refuses calls, requests and reply edited all alike, since the journal shows what was asked', async () => {
    const journal = file('journal.jsonl')
    const { copy, resume, marker } = await suspendTurn({ journal })
    const state = copy()
    state.pending.calls[1].arguments = EVIL
    state.pending.requests[1].arguments = EVIL
    editReply(state, EVIL)
    await expect(resume(state, { journal })).rejects.toThrow(
      /state\.pending\.calls\[1\]\.arguments: differ from the arguments the journal's approval request shows/,
    )
    const unknown = copy()
    for (const at of [unknown.pending.calls[1], unknown.pending.requests[1]]) at.callId = 'call_zz'
    unknown.pending.requests[1].rootCallId = 'call_zz'
    for (const message of [unknown.pending.reply[0], unknown.messages.at(-1)]) message.tool_calls[1].id = 'call_zz'
    const decisions = { call_zz: { kind: 'allowed-once' as const } }
    await expect(resume(unknown, { journal, decisions })).rejects.toThrow(
      /shows no approval request for call "call_zz"/,
    )
    expect(lines(marker)).toEqual(['read:a.txt'])
    // The untouched state resumes.
    const done = await resume(copy(), { journal })
    expect(done.stopReason).toBe('done')
    expect(lines(marker)).toEqual(['read:a.txt', 'write:b.txt', 'write:c.txt'])
  })
})

describe('sealed states (issue 22)', () => {
  it('a state sealed with stateKey resumes with the key; any edit, another key, or no key is refused', async () => {
    const { copy, resume, marker, first } = await suspendTurn({ stateKey: KEY })
    expect(first.state?.seal).toMatch(/^hmac-sha256:[A-Za-z0-9_-]{43}$/)
    // Consistent edits everywhere in the state (what the unsealed checks cannot see) break the seal.
    const forged = copy()
    forged.pending.calls[1].arguments = EVIL
    forged.pending.requests[1].arguments = EVIL
    editReply(forged, EVIL)
    await expect(resume(forged, { stateKey: KEY })).rejects.toThrow(/state\.seal: does not verify under stateKey/)
    const earlier = copy()
    earlier.messages[0].content = 'delete everything'
    await expect(resume(earlier, { stateKey: KEY })).rejects.toThrow(/state\.seal: does not verify/)
    const decided = { ...copy(), decisions: { call_c: { kind: 'allowed-once' } } }
    await expect(resume(decided, { stateKey: KEY })).rejects.toThrow(/state\.seal: does not verify/)
    await expect(resume(copy(), { stateKey: 'another key, also long enough' })).rejects.toThrow(/does not verify/)
    await expect(resume(copy())).rejects.toThrow(/state\.seal: the state is sealed; pass the key/)
    const { seal: _removed, ...unsealed } = copy()
    await expect(resume(unsealed, { stateKey: KEY })).rejects.toThrow(/state\.seal: missing/)
    await expect(resume(copy(), { stateKey: 'short' })).rejects.toThrow(/stateKey: expected at least 16 bytes/)
    expect(lines(marker)).toEqual(['read:a.txt'])
    // Key order and whitespace do not matter (canonical form); bytes and the same text are one key.
    const reordered = JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(copy()).reverse())))
    const done = await resume(reordered, { stateKey: Buffer.from(KEY) })
    expect(done.stopReason).toBe('done')
    expect(lines(marker)).toEqual(['read:a.txt', 'write:b.txt', 'write:c.txt'])
  })

  it('a state that suspends again is sealed again, and the next resume verifies it', async () => {
    const { copy, tools, agent, marker } = await suspendTurn({ stateKey: KEY })
    const partial = await resumeModelLoop({
      state: copy(),
      decisions: { call_b: { kind: 'allowed-once' } },
      tools,
      agent,
      model: scriptedModel(),
      stateKey: KEY,
    })
    expect(partial.stopReason).toBe('approval-required')
    expect(partial.state?.seal).toMatch(/^hmac-sha256:/)
    const done = await resumeModelLoop({
      state: partial.state,
      decisions: { call_c: { kind: 'denied', reason: 'no' } },
      tools,
      agent,
      model: scriptedModel(),
      stateKey: KEY,
    })
    expect(done.stopReason).toBe('done')
    expect(lines(marker)).toEqual(['read:a.txt', 'write:b.txt'])
  })
})
