// A large journal written straight to disk (no runtime), shared by the viewer's scale test and its
// benchmark: read_file calls with a highlighted window, bash calls with output, and generic calls,
// about 2 KB per call as in a real session.
import { createWriteStream } from 'node:fs'

const CODE = [
  "import { readFile } from 'node:fs/promises'",
  '',
  'export async function load(path: string): Promise<string[]> {',
  "  const text = await readFile(path, 'utf8')",
  "  return text.split('\\n').filter((line) => line.trim() !== '')",
  '}',
  '',
  'export function total(values: number[]): number {',
  '  let sum = 0',
  '  for (const value of values) sum += value',
  '  return sum',
  '}',
  '',
  'export function mean(values: number[]): number {',
  '  return values.length === 0 ? 0 : total(values) / values.length',
  '}',
  '',
  'export async function report(path: string): Promise<string> {',
  '  const values = (await load(path)).map(Number).filter((n) => Number.isFinite(n))',
  "  return values.length + ' values, total ' + total(values) + ', mean ' + mean(values).toFixed(2)",
  '}',
]

function lines(i: number): string[] {
  const common = { v: 1, ts: 1_700_000_000_000 + i, callId: `c${i}`, rootCallId: `c${i}`, parentCallId: null }
  const agentId = `agent-${i % 3}`
  switch (i % 3) {
    case 0: {
      const path = `src/module-${i}.ts`
      const window = CODE.map((text, n) => ({ number: n + 1, text }))
      return [
        { ...common, agentId, type: 'call-started', toolName: 'read_file', arguments: { path } },
        {
          ...common,
          agentId,
          type: 'result',
          toolName: 'read_file',
          durationMs: 2,
          result: {
            isError: false,
            content: [{ type: 'text', text: CODE.map((t, n) => `${n + 1}\t${t}`).join('\n') }],
            meta: { path, offset: 1, totalLines: CODE.length, lines: window },
          },
        },
      ].map((r) => JSON.stringify(r))
    }
    case 1: {
      const command = `npm test -- --grep case-${i}`
      const output =
        `> toolgate test\n> vitest run --grep case-${i}\n\n` +
        [1, 2, 3, 4, 5, 6].map((n) => ` ✓ test/case-${i}.test.ts > case ${i} part ${n} (${n * 3} ms)\n`).join('') +
        '\n Test Files  1 passed (1)\n      Tests  6 passed (6)\n   Duration  1.84s\n'
      return [
        { ...common, agentId, type: 'call-started', toolName: 'bash', arguments: { command } },
        {
          ...common,
          agentId,
          type: 'result',
          toolName: 'bash',
          durationMs: 840,
          result: {
            isError: false,
            content: [{ type: 'text', text: output }],
            meta: { exitCode: 0, output, command },
          },
        },
      ].map((r) => JSON.stringify(r))
    }
    default:
      return [
        {
          ...common,
          agentId,
          type: 'call-started',
          toolName: 'lookup',
          arguments: {
            query: `where is item ${i} used`,
            limit: 20,
            filters: { kind: 'symbol', scope: ['src', 'test'] },
          },
        },
        {
          ...common,
          agentId,
          type: 'result',
          toolName: 'lookup',
          durationMs: 5,
          result: {
            isError: i % 30 === 2,
            content: [{ type: 'text', text: `item ${i}: used in ${CODE.slice(0, 6).join(' / ')}` }],
          },
        },
      ].map((r) => JSON.stringify(r))
  }
}

/** Write a journal of `calls` calls to `path`; answers its size in bytes. */
export async function writeLargeJournal(path: string, calls: number): Promise<number> {
  const out = createWriteStream(path)
  let bytes = 0
  let batch = ''
  for (let i = 0; i < calls; i++) {
    batch += `${lines(i).join('\n')}\n`
    if (batch.length > 1 << 20 || i === calls - 1) {
      bytes += Buffer.byteLength(batch)
      if (!out.write(batch)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
      batch = ''
    }
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
  return bytes
}
