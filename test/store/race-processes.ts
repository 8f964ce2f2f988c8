// Processes that do one store operation at the same moment: each opens the file store, says it is
// ready, and acts when told to go, so the acts start together whatever the machine's load.
import { type ChildProcess, spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { until } from './until.js'

const STORE_MODULE = resolve(import.meta.dirname, '../../dist/store/index.js')

/**
 * Run `act` (an async function's body that has `store`, the built file store on `journal`, and
 * returns whether this process won; or, given the process's index, that body) in `count`
 * processes at once: every process's pid, and the pids of those that won (both in index order).
 */
export async function raceProcesses(
  journal: string,
  act: string | ((index: number) => string),
  count = 8,
): Promise<{ pids: number[]; winners: number[] }> {
  const script = (index: number) => `
    const { createFileStore } = await import(${JSON.stringify(STORE_MODULE)})
    const store = createFileStore({ journal: ${JSON.stringify(journal)} })
    process.stdout.write('ready\\n')
    process.stdin.once('data', async () => {
      const won = await (async () => { ${typeof act === 'string' ? act : act(index)} })()
      process.stdout.write(won ? 'won\\n' : 'lost\\n')
      process.exit(0)
    })`
  const children: ChildProcess[] = []
  const said: string[] = Array.from({ length: count }, () => '')
  for (let i = 0; i < count; i++) {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script(i)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    child.stdout?.on('data', (chunk: Buffer) => {
      said[i] += chunk.toString()
    })
    // A process that died before reading "go" fails the wait below with this, not an unhandled EPIPE.
    child.stdin?.on('error', (error) => {
      said[i] += `stdin: ${error.message}\n`
    })
    children.push(child)
  }
  const context = () => JSON.stringify(said)
  try {
    await until(() => (said.every((text) => text.includes('ready')) ? true : undefined), 'the processes to be ready', {
      context,
    })
    for (const child of children) child.stdin?.write('go\n')
    await until(() => (said.every((text) => /won|lost/.test(text)) ? true : undefined), 'every process to answer', {
      context,
    })
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill()
  }
  const pids = children.map((child) => child.pid ?? -1)
  return { pids, winners: pids.filter((_, i) => said[i].includes('won')) }
}
