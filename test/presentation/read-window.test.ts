import { describe, expect, it } from 'vitest'
import { languageFromPath, readWindow, splitLines } from '../../src/presentation/index.js'

describe('R-VIEW read window helper (issue 7: readWindow)', () => {
  it('numbers lines from 1 and honours offset and limit', () => {
    expect(readWindow('a\nb\nc\nd\n', 2, 2)).toEqual({
      lines: [
        { number: 2, text: 'b' },
        { number: 3, text: 'c' },
      ],
      totalLines: 4,
      offset: 2,
    })
  })

  it('keeps the requested offset when the window is empty', () => {
    expect(readWindow('a\nb\n', 10, 5)).toEqual({ lines: [], totalLines: 2, offset: 10 })
  })

  it('reads to the end without a limit and clamps a bad offset to 1', () => {
    expect(readWindow('a\nb', 0).lines).toEqual([
      { number: 1, text: 'a' },
      { number: 2, text: 'b' },
    ])
    expect(readWindow('a', Number.NaN).offset).toBe(1)
  })

  it('splits CRLF and LF, a final terminator opens no extra line, empty text has none', () => {
    expect(splitLines('a\r\nb\n')).toEqual(['a', 'b'])
    expect(splitLines('a\n\n')).toEqual(['a', ''])
    expect(splitLines('')).toEqual([])
    expect(readWindow('', 1, 10)).toEqual({ lines: [], totalLines: 0, offset: 1 })
  })
})

describe('R-VIEW language hint (issue 7: languageFromPath)', () => {
  it('maps extensions and well-known names', () => {
    expect(languageFromPath('src/a.ts')).toBe('typescript')
    expect(languageFromPath('x/Component.TSX')).toBe('tsx')
    expect(languageFromPath('a.py')).toBe('python')
    expect(languageFromPath('docs/README.md')).toBe('markdown')
    expect(languageFromPath('build/Dockerfile')).toBe('dockerfile')
    expect(languageFromPath('Makefile')).toBe('makefile')
    expect(languageFromPath('win\\path\\x.rs')).toBe('rust')
  })

  it('has no hint for unknown, missing or dot-only extensions', () => {
    expect(languageFromPath('a.unknownext')).toBeUndefined()
    expect(languageFromPath('LICENSE')).toBeUndefined()
    expect(languageFromPath('.gitignore')).toBeUndefined()
    expect(languageFromPath('a.')).toBeUndefined()
    expect(languageFromPath('constructor.__proto__')).toBeUndefined()
  })
})
