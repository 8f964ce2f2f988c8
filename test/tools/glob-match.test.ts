import { describe, expect, it } from 'vitest'
import { compileGlob, expandBraces } from '../../src/tools/index.js'

describe('glob tool matcher (issue 7: **, *, ?, {a,b})', () => {
  it('expands braces, nested ones and ones spanning directories', () => {
    expect(expandBraces('{src,test}/*.{ts,js}')).toEqual(['src/*.ts', 'src/*.js', 'test/*.ts', 'test/*.js'])
    expect(expandBraces('a{b,{c,d}}e')).toEqual(['abe', 'ace', 'ade'])
    expect(expandBraces('a{b}c')).toEqual(['a{b}c'])
    expect(expandBraces('x{y')).toEqual(['x{y'])
    expect(expandBraces('\\{a,b}')).toEqual(['\\{a,b}'])
  })

  it('refuses explosive brace expansion', () => {
    expect(() => expandBraces('{a,b}'.repeat(12))).toThrow(/more than 1024 alternatives/)
  })

  it('** crosses directories, * and ? stay within a segment', () => {
    const g = compileGlob('**/*.ts')
    expect(g.matches('a.ts')).toBe(true)
    expect(g.matches('src/deep/x/a.ts')).toBe(true)
    expect(g.matches('a.js')).toBe(false)
    const one = compileGlob('src/*.ts')
    expect(one.matches('src/a.ts')).toBe(true)
    expect(one.matches('src/x/a.ts')).toBe(false)
    expect(compileGlob('a?c').matches('abc')).toBe(true)
    expect(compileGlob('a?c').matches('a/c')).toBe(false)
  })

  it('wildcards skip dotfiles unless the pattern names the dot', () => {
    expect(compileGlob('**/*.ts').matches('.hidden/a.ts')).toBe(false)
    expect(compileGlob('*').matches('.env')).toBe(false)
    expect(compileGlob('.env').matches('.env')).toBe(true)
    expect(compileGlob('.*').matches('.env')).toBe(true)
  })

  it('escapes and regex metacharacters are literal', () => {
    expect(compileGlob('a\\*b').matches('a*b')).toBe(true)
    expect(compileGlob('a\\*b').matches('axb')).toBe(false)
    expect(compileGlob('a\\+\\(b\\).ts').matches('a+(b).ts')).toBe(true)
    expect(compileGlob('a.ts').matches('aXts')).toBe(false)
  })

  it('prunes directories that cannot contain a match', () => {
    const g = compileGlob('src/**/index.{ts,js}')
    expect(g.couldContain('src')).toBe(true)
    expect(g.couldContain('src/a/b')).toBe(true)
    expect(g.couldContain('test')).toBe(false)
    expect(compileGlob('*.md').couldContain('docs')).toBe(false)
  })

  it('character classes and extglobs (picomatch)', () => {
    expect(compileGlob('file[0-9].ts').matches('file7.ts')).toBe(true)
    expect(compileGlob('file[0-9].ts').matches('filex.ts')).toBe(false)
    expect(compileGlob('file[[:digit:]].ts').matches('file3.ts')).toBe(true)
    expect(compileGlob('a+(b).ts').matches('abbb.ts')).toBe(true)
    expect(compileGlob('a+(b).ts').matches('a.ts')).toBe(false)
    expect(compileGlob('src/!(*.test).ts').matches('src/a.ts')).toBe(true)
    expect(compileGlob('src/!(*.test).ts').matches('src/a.test.ts')).toBe(false)
    expect(compileGlob('*.@(ts|js)').matches('x.js')).toBe(true)
  })

  it('refuses patterns that would look outside the workspace', () => {
    expect(() => compileGlob('/etc/*')).toThrow(/relative to the workspace/)
    expect(() => compileGlob('../*')).toThrow(/'\.\.'/)
    expect(() => compileGlob('{a,..}/x')).toThrow(/'\.\.'/)
    expect(() => compileGlob('')).toThrow(/non-empty/)
  })
})
