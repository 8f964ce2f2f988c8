// Issue #14: what the Journal adds to a call (two synchronous appends per call: call-started and
// result), with and without fsync, and how fast readJournal reads the lines back.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { addTool, format, isMain, loadBuilt, printTable, type Row, time } from './util.js'

const { Journal, readJournal, ToolRuntime } = await loadBuilt()

async function runtime(journal?: { path: string; fsync: boolean }) {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime)
  ctx.tools.register(await addTool())
  if (journal) await ctx.plugin(Journal, journal)
  return ctx.tools
}

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-journal-bench-'))
  try {
    const signal = new AbortController().signal
    const input = { callId: 'c', name: 'add', arguments: { a: 1, b: 2 }, signal }
    const plain = await runtime()
    const bare = await time(() => plain.execute(input))
    const rows: Row[] = [{ name: 'execute(), no journal', avgNs: bare, ratio: '1×' }]
    const journaled = await runtime({ path: join(dir, 'a.jsonl'), fsync: false })
    const ns = await time(() => journaled.execute(input))
    rows.push({
      name: 'execute() with Journal',
      avgNs: ns,
      ratio: `${(ns / bare).toFixed(1)}× (+${format(ns - bare)})`,
    })
    const synced = await runtime({ path: join(dir, 'b.jsonl'), fsync: true })
    const nsSync = await time(() => synced.execute(input), 100)
    rows.push({ name: 'execute() with Journal, fsync: true', avgNs: nsSync, ratio: `${(nsSync / bare).toFixed(1)}×` })
    const path = join(dir, 'read.jsonl')
    const writer = await runtime({ path, fsync: false })
    for (let i = 0; i < 10_000; i++) await writer.execute({ ...input, callId: `c${i}` })
    const read = await time(async () => {
      let count = 0
      for await (const _record of readJournal(path)) count++
      if (count !== 20_000) throw new Error(`read ${count} records`)
    }, 1000)
    rows.push({ name: 'readJournal, 20,000 records (per record)', avgNs: read / 20_000, ratio: '' })
    printTable('Journal', rows)
    return rows
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
