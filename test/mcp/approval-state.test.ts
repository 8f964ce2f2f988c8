// Issue 35, item 4: the sealed requestState of an approval asked of a 2026 client. Expiry, replay
// and the bindings, checked with a clock rather than a wait.
import { describe, expect, it } from 'vitest'
import { APPROVAL_STATE_TTL_MS, ApprovalStateSeal, argumentsDigest } from '../../src/mcp/server/approval-state.js'

const bound = { subject: 'alice', tool: 'write_file', args: argumentsDigest({ b: 1, a: [1, 2] }) }
const fields = { ...bound, asked: 'write_file', callId: 'mcp-r-1' }

describe('ApprovalStateSeal', () => {
  it('opens its own state once, bound to the caller, tool and arguments', async () => {
    const seal = new ApprovalStateSeal()
    const wire = seal.seal(fields, 1_000)
    const opened = await seal.open(wire, bound, 2_000)
    expect(opened).toMatchObject({ ok: true, state: { ...fields, expires: 1_000 + APPROVAL_STATE_TTL_MS } })
    expect(await seal.open(wire, bound, 2_000)).toEqual({ ok: false, reason: 'it has already been used' })
  })

  it('the argument digest is canonical: key order does not matter, values do', () => {
    expect(argumentsDigest({ a: [1, 2], b: 1 })).toBe(bound.args)
    expect(argumentsDigest({ a: [2, 1], b: 1 })).not.toBe(bound.args)
  })

  it('refuses an expired state, another key, another caller', async () => {
    const seal = new ApprovalStateSeal()
    const wire = seal.seal(fields, 0)
    expect(await seal.open(wire, bound, APPROVAL_STATE_TTL_MS)).toEqual({ ok: false, reason: 'it has expired' })
    expect((await new ApprovalStateSeal().open(seal.seal(fields, 0), bound, 1)).ok).toBe(false)
    expect(await seal.open(seal.seal(fields, 0), { ...bound, subject: '' }, 1)).toEqual({
      ok: false,
      reason: 'it was issued to another caller',
    })
  })

  it('a spent nonce is forgotten only once its state has expired', async () => {
    const seal = new ApprovalStateSeal()
    const wire = seal.seal(fields, 0)
    expect((await seal.open(wire, bound, 1)).ok).toBe(true)
    expect((await seal.open(wire, bound, APPROVAL_STATE_TTL_MS - 1)).ok).toBe(false)
    expect(await seal.open(wire, bound, APPROVAL_STATE_TTL_MS + 1)).toEqual({ ok: false, reason: 'it has expired' })
  })

  it('carries an approval to later rounds of the call inside the seal', async () => {
    const seal = new ApprovalStateSeal()
    const approved = { asked: 'write_file', by: 'client-1', until: 5_000 }
    const opened = await seal.open(seal.seal({ ...fields, relay: {}, approved }, 1_000), bound, 2_000)
    expect(opened).toMatchObject({ ok: true, state: { approved } })
    // Sealed by this key but not an approval's shape: refused rather than trusted.
    const odd = seal.seal({ ...fields, approved: { asked: 'write_file' } as never }, 1_000)
    expect(await seal.open(odd, bound, 2_000)).toEqual({ ok: false, reason: 'it is malformed' })
  })

  it('names a kept program inside the seal; an unanswered retry is refused before the nonce is spent (issue 40, item 2)', async () => {
    const seal = new ApprovalStateSeal()
    const kept = { turn: 'gateway-program:1', calls: ['mcp-r-1:code:2'] }
    const wire = seal.seal({ ...fields, kept }, 1_000)
    let admitted = 0
    const unanswered = await seal.open(wire, bound, 2_000, () => 'inputResponses.toolgate/approval: missing')
    expect(unanswered).toEqual({ ok: false, reason: 'inputResponses.toolgate/approval: missing', input: true })
    // Not spent: the same state, answered, opens once.
    const opened = await seal.open(wire, bound, 2_000, (state) => {
      admitted++
      expect(state.kept).toEqual(kept)
      return undefined
    })
    expect(opened).toMatchObject({ ok: true, state: { kept } })
    expect(admitted).toBe(1)
    expect(await seal.open(wire, bound, 2_000, () => undefined)).toEqual({
      ok: false,
      reason: 'it has already been used',
    })
    // Sealed by this key but not a kept program's shape: refused rather than trusted.
    for (const odd of [
      { turn: 'x', calls: [] },
      { turn: 1, calls: ['a'] },
      { turn: 'x', calls: [2] },
    ])
      expect(await seal.open(seal.seal({ ...fields, kept: odd as never }, 1_000), bound, 2_000)).toEqual({
        ok: false,
        reason: 'it is malformed',
      })
  })
})
