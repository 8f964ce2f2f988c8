import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  defaultTerminalColor,
  renderToolCallLines,
  renderToolResultLines,
  type ToolCallView,
  type ToolResultView,
} from '../../src/presentation/index.js'

const plain = { color: false }
const color = { color: true }
// biome-ignore lint/suspicious/noControlCharactersInRegex: detecting ANSI codes is the point
const ANSI = /\u001b\[/

const calls: ToolCallView[] = [
  {
    card: 'generic',
    title: 'read_file',
    kind: 'read',
    rawInput: { path: 'a.ts' },
    locations: [{ path: 'a.ts', line: 3 }],
  },
  { card: 'terminal', title: 'ls -la', description: 'list files', cwd: '/work' },
  { card: 'diff', title: 'Edit a.ts', diffs: [{ path: 'a.ts', oldText: 'old\n', newText: 'new\n' }] },
]

const results: ToolResultView[] = [
  { card: 'generic', title: 'done', content: [{ type: 'text', text: 'hello\nworld' }] },
  { card: 'terminal', title: 'ls', output: 'a\nb\n', exitCode: 0 },
  { card: 'diff', title: 'Edited a.ts', diffs: [{ path: 'a.ts', oldText: 'keep\nold\n', newText: 'keep\nnew\n' }] },
  {
    card: 'search',
    shape: 'matches',
    title: 'Grep /x/',
    truncated: true,
    total: 7,
    files: [{ path: 'a.ts', matches: [{ line: 4, text: 'const x = 1' }] }],
  },
  { card: 'search', shape: 'paths', title: 'Glob **/*.ts', truncated: false, total: 2, paths: ['a.ts', 'b/c.ts'] },
  {
    card: 'read',
    title: 'Read a.ts',
    path: 'a.ts',
    offset: 9,
    lines: [
      { number: 9, text: 'nine' },
      { number: 10, text: 'ten' },
    ],
    totalLines: 12,
    lang: 'typescript',
  },
  {
    card: 'web',
    kind: 'search',
    title: 'Search',
    sources: [{ title: 'Docs', url: 'https://example.com', snippet: 'about x' }],
    answer: 'x is y',
    truncated: true,
  },
  { card: 'web', kind: 'fetch', title: 'Fetch', url: 'https://example.com/p', statusCode: 404, truncated: false },
]

describe('R-VIEW terminal renderer: pending cards (issue 7)', () => {
  it('renders a generic card with kind, locations and raw input', () => {
    expect(renderToolCallLines(calls[0], plain)).toEqual(['● read_file [read]', '  → a.ts:3', '  {"path":"a.ts"}'])
  })

  it('renders a terminal card as a prompt line with description and cwd', () => {
    expect(renderToolCallLines(calls[1], plain)).toEqual(['$ ls -la', '  list files', '  in /work'])
  })

  it('renders a diff card with its hunks', () => {
    expect(renderToolCallLines(calls[2], plain)).toEqual(['✎ Edit a.ts', 'a.ts', '- old', '+ new'])
  })

  it('shortens long raw input', () => {
    const [, input] = renderToolCallLines(
      { card: 'generic', title: 't', rawInput: 'x'.repeat(500) },
      { color: false, maxInputChars: 20 },
    )
    expect(input.trim()).toHaveLength(20)
    expect(input.endsWith('…')).toBe(true)
  })
})

describe('R-VIEW terminal renderer: completed cards (issue 7)', () => {
  it('generic: title and content text', () => {
    expect(renderToolResultLines(results[0], plain)).toEqual(['done', 'hello', 'world'])
  })

  it('terminal: output and an exit badge; failures and signals get their own badge', () => {
    expect(renderToolResultLines(results[1], plain)).toEqual(['ls', 'a', 'b', '✓ exit 0'])
    expect(renderToolResultLines({ card: 'terminal', output: 'err', exitCode: 2 }, plain)).toEqual(['err', '✗ exit 2'])
    expect(renderToolResultLines({ card: 'terminal', signal: 'SIGTERM' }, plain)).toEqual(['✗ killed by SIGTERM'])
  })

  it('diff: context, removed and added lines; a new file is all additions', () => {
    expect(renderToolResultLines(results[2], plain)).toEqual(['Edited a.ts', 'a.ts', '  keep', '- old', '+ new'])
    expect(
      renderToolResultLines({ card: 'diff', diffs: [{ path: 'n.ts', oldText: null, newText: 'a\nb\n' }] }, plain),
    ).toEqual(['n.ts (new file)', '+ a', '+ b'])
    expect(
      renderToolResultLines(
        {
          card: 'diff',
          diffs: [
            { path: 'f', oldText: 'a\n', newText: 'b\n' },
            { path: 'f', oldText: 'c\n', newText: 'd\n' },
          ],
        },
        plain,
      ),
    ).toEqual(['f', '- a', '+ b', '  ⋯', '- c', '+ d'])
  })

  it('search matches: grouped by file with line numbers and a truncation footer', () => {
    expect(renderToolResultLines(results[3], plain)).toEqual([
      'Grep /x/',
      'a.ts',
      '  4: const x = 1',
      '7 matches (truncated: showing 1)',
    ])
  })

  it('search paths: one path per line and a count', () => {
    expect(renderToolResultLines(results[4], plain)).toEqual(['Glob **/*.ts', 'a.ts', 'b/c.ts', '2 paths'])
  })

  it('read: a numbered window with its range; an empty window keeps the offset', () => {
    expect(renderToolResultLines(results[5], plain)).toEqual([
      'Read a.ts',
      'a.ts: lines 9-10 of 12',
      ' 9 │ nine',
      '10 │ ten',
    ])
    expect(renderToolResultLines({ card: 'read', path: 'a', offset: 50, lines: [], totalLines: 3 }, plain)).toEqual([
      'a: no lines at offset 50 of 3',
    ])
  })

  it('web search and fetch', () => {
    expect(renderToolResultLines(results[6], plain)).toEqual([
      'Search',
      'x is y',
      '• Docs — https://example.com',
      '  about x',
      '(results truncated)',
    ])
    expect(renderToolResultLines(results[7], plain)).toEqual(['Fetch', 'https://example.com/p → 404'])
  })
})

describe('R-VIEW terminal renderer: colour and safety (issue 7)', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it('plain mode never emits ANSI; colour mode does for every card', () => {
    for (const view of calls) {
      expect(renderToolCallLines(view, plain).join('\n')).not.toMatch(ANSI)
      expect(renderToolCallLines(view, color).join('\n')).toMatch(ANSI)
    }
    for (const view of results) {
      expect(renderToolResultLines(view, plain).join('\n')).not.toMatch(ANSI)
      expect(renderToolResultLines(view, color).join('\n')).toMatch(ANSI)
    }
  })

  it('colours added lines green and removed lines red', () => {
    const lines = renderToolResultLines(results[2], color)
    expect(lines).toContain('\u001b[32m+ new\u001b[39m')
    expect(lines).toContain('\u001b[31m- old\u001b[39m')
    expect(renderToolResultLines({ card: 'terminal', exitCode: 1 }, color)).toEqual(['\u001b[31m✗ exit 1\u001b[39m'])
  })

  it('strips escape sequences and control characters from tool text', () => {
    const lines = renderToolResultLines(
      {
        card: 'terminal',
        output: '\u001b[31mred\u001b[0m\n\u001b]0;title\u0007ok\nprogress 10%\rprogress 100%\nbell\u0007',
      },
      plain,
    )
    expect(lines).toEqual(['red', 'ok', 'progress 100%', 'bell\ufffd'])
  })

  it('defaults to colour only on a TTY without NO_COLOR', () => {
    const tty = process.stdout.isTTY
    try {
      Object.defineProperty(process.stdout, 'isTTY', { value: true, configurable: true })
      vi.stubEnv('NO_COLOR', '')
      expect(defaultTerminalColor()).toBe(true)
      vi.stubEnv('NO_COLOR', '1')
      expect(defaultTerminalColor()).toBe(false)
      expect(renderToolResultLines(results[1]).join('\n')).not.toMatch(ANSI)
      Object.defineProperty(process.stdout, 'isTTY', { value: false, configurable: true })
      vi.stubEnv('NO_COLOR', '')
      expect(defaultTerminalColor()).toBe(false)
    } finally {
      Object.defineProperty(process.stdout, 'isTTY', { value: tty, configurable: true })
    }
  })

  it('never throws on malformed views', () => {
    const junk: unknown[] = [
      null,
      5,
      'x',
      { card: 'nope' },
      { card: 'read' },
      { card: 'search', files: 'x' },
      { card: 'diff', diffs: [1, { path: 3 }] },
    ]
    for (const view of junk) {
      expect(() => renderToolResultLines(view as ToolResultView, plain)).not.toThrow()
      expect(() => renderToolCallLines(view as ToolCallView, plain)).not.toThrow()
    }
    let deep: unknown = 0
    for (let i = 0; i < 100_000; i++) deep = [deep]
    const lines = renderToolCallLines({ card: 'generic', title: 'deep', rawInput: deep as never }, plain)
    expect(lines[0]).toBe('● deep')
    expect(renderToolResultLines({ card: 'nope' } as unknown as ToolResultView, plain)).toEqual([
      '[unknown card] {"card":"nope"}',
    ])
  })
})

describe('terminal renderer: every MCP content kind (issue 23)', () => {
  const content = [
    { type: 'audio', mediaType: 'audio/wav', data: Buffer.alloc(12 * 1024).toString('base64') },
    { type: 'resource-link', uri: 'file:///r.pdf', name: 'r.pdf', title: 'Report' },
    { type: 'resource-link', uri: 'https://x/y', name: 'y' },
    { type: 'resource', resource: { uri: 'file:///notes.txt', mediaType: 'text/plain', text: 'one\ntwo' } },
    { type: 'resource', resource: { uri: 'file:///x.bin', mediaType: 'application/octet-stream', blob: 'AAECAw==' } },
    { type: 'resource', resource: { uri: 'file:///y', blob: 'AA==' } },
  ]

  it('shows audio as type and size, a link as name and URI, a resource as its text or type and size', () => {
    expect(renderToolResultLines({ card: 'generic', content } as ToolResultView, plain)).toEqual([
      '[audio audio/wav 12 KB]',
      '[link] Report file:///r.pdf',
      '[link] y https://x/y',
      '[resource] file:///notes.txt text/plain',
      'one',
      'two',
      '[resource] file:///x.bin application/octet-stream 4 B',
      '[resource] file:///y binary 1 B',
    ])
  })

  it('escapes untrusted names, URIs, types and resource text', () => {
    const hostile = [
      { type: 'audio', mediaType: 'audio/\u001b[2Jwav', data: 'AA==' },
      { type: 'resource-link', uri: 'file:///\u001b]8;;evil\u0007x', name: 'n\u0007' },
      { type: 'resource', resource: { uri: 'u\u001b[31m', mediaType: 'm\u0000', text: 'a\u001b[31mb\rc' } },
    ]
    const lines = renderToolResultLines({ card: 'generic', content: hostile } as ToolResultView, plain)
    expect(lines.join('\n')).not.toMatch(ANSI)
    expect(lines).toEqual(['[audio audio/wav 1 B]', '[link] n\ufffd file:///x', '[resource] u m\ufffd', 'c'])
  })

  it('a malformed block of a known kind renders a placeholder, never throws', () => {
    const bad = [{ type: 'audio' }, { type: 'resource-link' }, { type: 'resource', resource: 5 }]
    expect(renderToolResultLines({ card: 'generic', content: bad } as unknown as ToolResultView, plain)).toEqual([
      '[audio ? ?]',
      '[link] ? ?',
      '[resource ?]',
    ])
  })
})
