// #11: what the bubblewrap sandbox adds to one `bash` call (`echo hi`), side by side with the
// unconfined tool in the same run. The two alternate call by call (medians of ROUNDS each), so a
// change in the shared machine's load hits both alike; process start-up dominates either way.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { format, isMain, loadBuilt, printTable, type Row } from './util.js'

const { createBashTool } = await loadBuilt()
const ROUNDS = Number(process.env.BASH_BENCH_ROUNDS ?? 60)

/** Median wall time per call of each tool, the tools alternating call by call (ns). */
async function interleaved(calls: Array<() => Promise<unknown>>): Promise<number[]> {
  for (const call of calls) await call()
  const times = calls.map(() => [] as number[])
  for (let i = 0; i < ROUNDS; i++) {
    for (const [k, call] of calls.entries()) {
      const start = process.hrtime.bigint()
      await call()
      times[k].push(Number(process.hrtime.bigint() - start))
    }
  }
  return times.map((t) => t.sort((a, b) => a - b)[Math.floor(t.length / 2)])
}

export async function run(): Promise<Row[]> {
  const cwd = mkdtempSync(path.join(tmpdir(), 'toolgate-bench-bash-'))
  try {
    const signal = new AbortController().signal
    const args = { command: 'echo hi' }
    const exec = (name: string) =>
      ({
        callId: 'c',
        rootCallId: 'c',
        name,
        arguments: args,
        signal,
        token: Symbol('c'),
        deferContext() {},
        concludeTurn() {},
        progress() {},
      }) as never
    const none = createBashTool({ cwd, sandbox: 'none' })
    const rows: Row[] = []
    let sandboxed: createdOrSkip
    try {
      sandboxed = createBashTool({ cwd, sandbox: 'bwrap' })
    } catch (error) {
      sandboxed = (error as Error).message
    }
    if (typeof sandboxed === 'string') {
      const [unconfined] = await interleaved([() => none.execute(args, exec('bash'))])
      rows.push({ name: "bash `echo hi`, sandbox: 'none'", avgNs: unconfined, ratio: '1×' })
      rows.push({ name: `bash \`echo hi\`, sandbox: 'bwrap' — skipped: ${sandboxed}`, avgNs: 0 })
    } else {
      const tool = sandboxed
      const [unconfined, confined] = await interleaved([
        () => none.execute(args, exec('bash')),
        () => tool.execute(args, exec('bash')),
      ])
      rows.push({ name: "bash `echo hi`, sandbox: 'none' (median)", avgNs: unconfined, ratio: '1×' })
      rows.push({
        name: `bash \`echo hi\`, sandbox: 'bwrap' (median; +${format(confined - unconfined)} per call)`,
        avgNs: confined,
        ratio: `${(confined / unconfined).toFixed(2)}×`,
      })
    }
    printTable('bash: bubblewrap sandbox vs unconfined (issue 11)', rows)
    return rows
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
}

type createdOrSkip = ReturnType<typeof createBashTool> | string

if (isMain(import.meta.url)) await run()
