// Issue #10: cold `import 'toolgate'` of the built package, in fresh processes, against the eager
// graph the root had before Code Mode loaded lazily (the root plus esbuild and QuickJS), measured
// alternately in one run so machine load hits both sides alike.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { format, isMain, printTable, type Row } from './util.js'

const root = fileURLToPath(new URL('..', import.meta.url))

function coldImportNs(body: string): number {
  const script = `const t = process.hrtime.bigint(); ${body}; process.stdout.write(String(process.hrtime.bigint() - t))`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
  return Number(out)
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function run(rounds = 15): Promise<Row[]> {
  const lazy: number[] = []
  const eager: number[] = []
  for (let i = 0; i < rounds; i++) {
    lazy.push(coldImportNs(`await import('toolgate')`))
    eager.push(
      coldImportNs(
        `await import('toolgate'); await import('esbuild'); await import('quickjs-emscripten-core'); await import('@jitl/quickjs-wasmfile-release-sync')`,
      ),
    )
  }
  const lazyNs = median(lazy)
  const eagerNs = median(eager)
  const rows: Row[] = [
    { name: `import 'toolgate' (root only; median of ${rounds} cold processes)`, avgNs: lazyNs, ratio: '1.00×' },
    {
      name: 'import root + esbuild + QuickJS (the graph the root loaded before)',
      avgNs: eagerNs,
      ratio: `${(eagerNs / lazyNs).toFixed(2)}×`,
    },
  ]
  printTable('Cold import of the package root (built dist)', rows)
  console.log(`\nlazy root: ${format(lazyNs)}; eager graph: ${format(eagerNs)}`)
  return rows
}

if (isMain(import.meta.url)) await run()
