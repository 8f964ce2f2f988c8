// Issue 22: grep gives one answer about a binary file — skipped as binary, and said so — and never
// sends a binary byte to the model, whichever engine runs and however the file is reached.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFsTools } from '../../src/tools/index.js'
import { byName, runTool, tempDir, textOf } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }

async function write(rel: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(path.join(ws.dir, rel)), { recursive: true })
  await writeFile(path.join(ws.dir, rel), content)
}

beforeEach(async () => {
  ws = await tempDir('binary22')
  // A NUL and invalid UTF-8 right after a match.
  await write('blob.bin', Buffer.concat([Buffer.from('needle'), Buffer.from([0, 0xff, 0xfe]), Buffer.from('needle\n')]))
  // Text for 100 KB (a match in it), then a NUL: ripgrep reports the match before it sees the NUL.
  await write(
    'late/late.dat',
    Buffer.concat([
      Buffer.from(`${'a'.repeat(100_000)}\nneedle early\n${'b'.repeat(100_000)}`),
      Buffer.from([0]),
      Buffer.from('needle after\n'),
    ]),
  )
  await write('late/text.txt', 'needle in text\n')
})
afterEach(async () => {
  await ws.cleanup()
})

/** No NUL, no replacement character, nothing of the binary files, in the value or what the model reads. */
function expectNoBinaryBytes(record: { value: unknown; result: unknown }): void {
  for (const json of [JSON.stringify(record.value), JSON.stringify(record.result)]) {
    expect(json).not.toMatch(/\\u0000|\ufffd|\\ufffd/)
    expect(json).not.toContain('needle early')
    expect(json).not.toContain('needle after')
  }
}

describe.each([
  ['ripgrep', undefined],
  ['JavaScript', false],
] as const)('issue 22: grep (%s) on binary files', (_engine, ripgrep) => {
  const grep = () => byName(createFsTools({ root: ws.dir, ...(ripgrep === false ? { ripgrep } : {}) }), 'grep')

  it.each(['blob.bin', 'late/late.dat'])('named explicitly, %s is skipped as binary and said so', async (file) => {
    const record = await runTool(grep(), { pattern: 'needle', path: file })
    expect(record.value).toEqual({
      pattern: 'needle',
      files: [],
      total: 0,
      truncated: false,
      filesSearched: 0,
      filesSkipped: 1,
      binarySkipped: 1,
    })
    expect(textOf(record.result)).toBe(
      'No matches for /needle/ in 0 file(s); 1 binary file skipped (binary files are not searched)',
    )
    expectNoBinaryBytes(record)
  })

  it('in a directory, a file with a NUL after a match is skipped, and text files beside it are searched', async () => {
    const record = await runTool(grep(), { pattern: 'needle', path: 'late' })
    expect(record.value).toEqual({
      pattern: 'needle',
      files: [{ path: 'late/text.txt', matches: [{ line: 1, text: 'needle in text' }] }],
      total: 1,
      truncated: false,
      filesSearched: 1,
      filesSkipped: 1,
      binarySkipped: 1,
    })
    expect(textOf(record.result)).toBe('late/text.txt:1:needle in text')
    expectNoBinaryBytes(record)
  })

  it('a whole-tree search shows only the text file', async () => {
    const record = await runTool(grep(), { pattern: 'needle' })
    expect(record.value).toMatchObject({ files: [{ path: 'late/text.txt' }], total: 1 })
    expectNoBinaryBytes(record)
  })
})
