// Issue 41: the default tool search's first search at 1,000 tools, with and without the idle build
// (the index built and the thesaurus opened in slices once the registrations settle). Each case in
// a fresh child process (the thesaurus and the JIT are per process), alternating: "at once"
// searches right after registering (what every first search paid before), "idle" waits for the
// idle build, then searches (its idle build CPU is what a process that never searches pays). CPU is
// the process's own.
// Run: `npx tsx bench/tool-search-first.bench.ts [rounds]`.
import { execFileSync } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import type { ToolDefinition } from '../src/contract/tool-definition.js'
import { isMain } from './util.js'

const TOOLS = 1_000
const QUERY = 'send a message to the team channel'

interface Sample {
  /** CPU from the end of the registrations to the idle build's end (0 for "at once"). */
  idleCpu: number
  /** The longest the event loop was held while waiting. */
  heldMs: number
  firstWall: number
  firstCpu: number
}

const cpu = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** One case, in this process (the child's side). */
async function child(mode: string): Promise<Sample> {
  const { catalog } = await import('./tool-search-eval.bench.js')
  const { createToolRuntime } = await import('../src/index.js')
  const { TextSearchEngine } = await import('../src/search/index.js')
  const { monitorEventLoopDelay } = await import('node:perf_hooks')
  const handle = await createToolRuntime({ mode: 'native' })
  const tools = Array.from({ length: TOOLS }, (_, i) => {
    const base = catalog[i % catalog.length] as ToolDefinition
    const copy = Math.floor(i / catalog.length)
    return copy === 0
      ? base
      : { ...base, name: `${base.name}_${copy}`, description: `${base.description} (copy ${copy})` }
  })
  let engine: InstanceType<typeof TextSearchEngine> | undefined
  const step = TextSearchEngine.prototype.buildStep
  TextSearchEngine.prototype.buildStep = function (this: InstanceType<typeof TextSearchEngine>, count: number) {
    engine = this
    return step.call(this, count)
  }
  for (const tool of tools) handle.tools.register(tool)
  // The runtime's view of the tools, as a listing before any search would build it.
  handle.tools.host.visibleTools()
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const idleBegan = cpu()
  if (mode !== 'at-once') {
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline && !(engine?.isBuilt === true)) await new Promise((r) => setTimeout(r, 20))
  }
  const idleCpu = mode === 'at-once' ? 0 : cpu() - idleBegan
  delay.disable()
  const t = performance.now()
  const c = cpu()
  handle.tools.search(QUERY)
  const firstWall = performance.now() - t
  const firstCpu = cpu() - c
  if (mode === 'at-once') {
    // What the machine's load alone holds the loop for, with nothing scheduled: the baseline.
    delay.reset()
    delay.enable()
    await new Promise((r) => setTimeout(r, 600))
    delay.disable()
  }
  const sample = { idleCpu, heldMs: delay.max / 1e6, firstWall, firstCpu }
  await handle.dispose()
  return sample
}

export async function run(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 7)
  const modes = ['at-once', 'idle'] as const
  const samples = new Map<string, Sample[]>(modes.map((mode) => [mode, []]))
  const self = fileURLToPath(import.meta.url)
  for (let r = 0; r < rounds; r++)
    for (const mode of modes) {
      const out = execFileSync(process.execPath, [...process.execArgv, self, '--child', mode], { encoding: 'utf8' })
      samples.get(mode)?.push(JSON.parse(out.trim().split('\n').at(-1) as string) as Sample)
    }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
  const ms = (value: number) => `${value.toFixed(1)} ms`
  console.log(
    `\n## Tool search's first search, ${TOOLS} tools (${rounds} processes per case, medians, load average ${os.loadavg()[0]?.toFixed(1)})\n`,
  )
  console.log('| case | idle build CPU | event loop held at most | first search wall | first search CPU |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  const labels = { 'at-once': 'searched at once (as before)', idle: 'searched after the idle build' }
  for (const mode of modes) {
    const s = samples.get(mode) ?? []
    const field = (f: keyof Sample) => ms(median(s.map((x) => x[f])))
    const first = [field('firstWall'), field('firstCpu')]
    console.log(
      `| ${labels[mode]} | ${mode === 'at-once' ? '' : field('idleCpu')} | ${field('heldMs')}${mode === 'at-once' ? ' (600 ms idle, baseline)' : ''} | ${first.join(' | ')} |`,
    )
  }
}

if (process.argv[2] === '--child') console.log(JSON.stringify(await child(process.argv[3] as string)))
else if (isMain(import.meta.url)) await run()
