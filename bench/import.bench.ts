// Cold `import 'toolgate'` of the built package, in fresh processes, measured alternately in one
// run so machine load hits every side alike: the root as shipped (bundled entries, lazy engines),
// the eager graph the root had before Code Mode loaded lazily (the root plus esbuild and QuickJS),
// and, when TOOLGATE_IMPORT_BASELINE names another build's entry file (for example the commit
// before issue 10, built in a scratch worktree), that build.
import { execFileSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { format, isMain, printTable, type Row } from './util.js'

const root = fileURLToPath(new URL('..', import.meta.url))

interface Sample {
  wallNs: number
  cpuNs: number
}

function coldImport(body: string): Sample {
  const script = `const c = process.cpuUsage(); const t = process.hrtime.bigint(); ${body}; const d = process.cpuUsage(c); process.stdout.write(String(process.hrtime.bigint() - t) + ' ' + (d.user + d.system) * 1000)`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
  const [wall, cpu] = out.split(' ').map(Number)
  return { wallNs: wall, cpuNs: cpu }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function run(rounds = 15): Promise<Row[]> {
  const cases: Array<[string, string]> = [
    [`import 'toolgate' (median of ${rounds} cold processes)`, `await import('toolgate')`],
    [
      'import root + esbuild + QuickJS (the engines the root loaded eagerly before)',
      `await import('toolgate'); await import('esbuild'); await import('quickjs-emscripten-core'); await import('@jitl/quickjs-wasmfile-release-sync')`,
    ],
  ]
  const baseline = process.env.TOOLGATE_IMPORT_BASELINE
  if (baseline)
    cases.push([`baseline build (${baseline})`, `await import(${JSON.stringify(pathToFileURL(baseline).href)})`])
  const samples = cases.map(() => [] as Sample[])
  for (let i = 0; i < rounds; i++) {
    for (const [k, [, body]] of cases.entries()) samples[k].push(coldImport(body))
  }
  const wall = samples.map((s) => median(s.map((x) => x.wallNs)))
  const cpu = samples.map((s) => median(s.map((x) => x.cpuNs)))
  const rows: Row[] = cases.map(([name], k) => ({
    name: `${name}; CPU ${format(cpu[k])}`,
    avgNs: wall[k],
    ratio: `${(wall[k] / wall[0]).toFixed(2)}× wall, ${(cpu[k] / cpu[0]).toFixed(2)}× CPU`,
  }))
  printTable('Cold import of the package root (built dist), wall time', rows)
  return rows
}

if (isMain(import.meta.url)) await run()
