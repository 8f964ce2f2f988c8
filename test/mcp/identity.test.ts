// Issue 24: the AuthInfo the HTTP face hangs on an authenticated request, and the Identity policy reads from it.
import { describe, expect, it } from 'vitest'
import { authInfoFor, identityOf } from '../../src/mcp/protocol/identity.js'

describe('identityOf / authInfoFor', () => {
  it('round-trips an identity through the AuthInfo the SDK hands to handlers', () => {
    const info = authInfoFor(
      { subject: 'alice', groups: ['dev'], scopes: ['tools:call'], claims: { iss: 'https://as.test' } },
      'sha256:abcd',
      1_900_000_000,
    )
    expect(info).toEqual({
      token: 'sha256:abcd',
      clientId: 'alice',
      scopes: ['tools:call'],
      expiresAt: 1_900_000_000,
      extra: { subject: 'alice', groups: ['dev'], claims: { iss: 'https://as.test' } },
    })
    const identity = identityOf(info)
    expect(identity).toEqual({
      subject: 'alice',
      groups: ['dev'],
      scopes: ['tools:call'],
      claims: { iss: 'https://as.test' },
    })
    expect(Object.isFrozen(identity?.groups)).toBe(true)
  })

  it('is undefined without an AuthInfo or with one of another shape', () => {
    expect(identityOf(undefined)).toBeUndefined()
    expect(identityOf({ token: 't', clientId: 'c', scopes: [] })).toBeUndefined()
    expect(
      identityOf({ token: 't', clientId: 'c', scopes: [], extra: { subject: 'a', groups: 'dev' } }),
    ).toBeUndefined()
  })

  it('defaults claims to empty', () => {
    expect(
      identityOf({ token: 't', clientId: 'c', scopes: ['s'], extra: { subject: 'a', groups: [] } })?.claims,
    ).toEqual({})
  })
})
