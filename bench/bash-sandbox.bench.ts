// #11: what the bubblewrap sandbox adds to one `bash` call (`echo hi`), side by side with the
// unconfined tool in the same run, plus the sandbox's own start-up probe (paid once per tool).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { format, isMain, loadBuilt, printTable, type Row, time } from './util.js'

const { createBashTool } = await loadBuilt()

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
    const unconfined = await time(() => none.execute(args, exec('bash')), 3000)
    rows.push({ name: "bash `echo hi`, sandbox: 'none'", avgNs: unconfined, ratio: '1×' })
    let sandboxed: createdOrSkip
    try {
      sandboxed = createBashTool({ cwd, sandbox: 'bwrap' })
    } catch (error) {
      sandboxed = (error as Error).message
    }
    if (typeof sandboxed === 'string') {
      rows.push({ name: `bash \`echo hi\`, sandbox: 'bwrap' — skipped: ${sandboxed}`, avgNs: 0 })
    } else {
      const tool = sandboxed
      const confined = await time(() => tool.execute(args, exec('bash')), 3000)
      rows.push({
        name: `bash \`echo hi\`, sandbox: 'bwrap' (+${format(confined - unconfined)} per call)`,
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
