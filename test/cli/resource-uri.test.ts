// Resource URIs are judged in their RFC 3986 normal form (issue 36, item 10): every spelling of a
// denied URI that an upstream would read as the same file is denied, and what has no single
// meaning is refused rather than guessed.
import { describe, expect, it } from 'vitest'
import { catalogVerdict } from '../../src/gateway/resource-policy.js'
import { normalizeResourceUri } from '../../src/gateway/resource-uri.js'

const normal = (uri: string) => {
  const result = normalizeResourceUri(uri)
  return result.ok ? result.uri : `refused: ${result.reason}`
}

describe('normalizeResourceUri', () => {
  it('brings each spelling of one file to one form', () => {
    const spellings = [
      'file:///srv/secret.txt',
      'file:///srv/public/../secret.txt',
      'file:///srv/public/%2e%2e/secret.txt',
      'file:///srv/public/%2E%2e/secret.txt',
      'file:///srv/./secret.txt',
      'file:///srv//secret.txt',
      'file:////srv/secret.txt',
      'file:///srv/%73ecret.txt',
      'file:///srv/sub/../secret.txt',
      'file:///srv/a/b/../../secret.txt',
      'FILE:///srv/secret.txt',
      'file:///srv/public/../../srv/secret.txt',
    ]
    for (const uri of spellings) expect(normal(uri), uri).toBe('file:///srv/secret.txt')
  })

  it('removes excess ".." at the root, lower-cases scheme and host, upper-cases other escapes', () => {
    expect(normal('file:///srv/public/../../../etc/passwd')).toBe('file:///etc/passwd')
    expect(normal('HTTPS://Example.COM/A%7e%2a/b')).toBe('https://example.com/A~%2A/b')
    expect(normal('db://User@HOST:5432/t?q=%7e#F')).toBe('db://User@host:5432/t?q=~#F')
    expect(normal('note://a/items/')).toBe('note://a/items/')
    expect(normal('note://a/items/.')).toBe('note://a/items/')
    expect(normal('urn:isbn:0451450523')).toBe('urn:isbn:0451450523')
  })

  it('refuses an encoded "/" or "\\", a raw "\\", a NUL, a broken escape and a URI without scheme', () => {
    expect(normal('file:///srv/public/..%2fsecret.txt')).toMatch(/refused: .*"%2f", an encoded "\/"/)
    expect(normal('file:///srv/public/..%5Csecret.txt')).toMatch(/refused: .*an encoded "\\"/)
    expect(normal('file:///srv/public\\..\\secret.txt')).toMatch(/refused: .*contains "\\"/)
    expect(normal('file:///srv/secret.txt%00.png')).toMatch(/refused: .*NUL/)
    expect(normal('file:///srv/%zz')).toMatch(/refused: .*"%zz" is not a percent-encoded byte/)
    expect(normal('secret.txt')).toMatch(/refused: .*no scheme/)
  })
})

describe('catalogVerdict on normalized URIs', () => {
  it('a deny glob holds against every spelling that normalizes into it', () => {
    const policy = { deny: ['resource:file:///srv/secret.txt', 'resource:file:///etc/*'] }
    for (const uri of [
      'file:///srv/public/../../etc/passwd',
      'file:///srv/public/%2e%2e/secret.txt',
      'file:///srv/./secret.txt',
      'file:///srv//secret.txt',
      'file:///srv/%73ecret.txt',
      'file:///srv/sub/../secret.txt',
    ]) {
      const result = normalizeResourceUri(uri)
      expect(result.ok, uri).toBe(true)
      if (result.ok) expect(catalogVerdict(policy, 'resource', result.uri).verdict, uri).toBe('hidden')
    }
  })
})
