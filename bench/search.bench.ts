// grep and glob on real trees: toolgate's tools (built package) vs the bare engines they run,
// side by side in one process: `rg` spawned with the same flags (and with its defaults), and a
// bare tinyglobby call with the same ignores. Trees: a generated 100,000-file tree, this
// repository's node_modules, and minified-style files whose single lines hold 100,000 hits.
// The cases run interleaved, round by round, so a change in machine load hits all of them alike
// (the machines are shared); the ratio is the median of the per-round ratios.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { glob } from 'tinyglobby'
import { format, isMain, loadBuilt } from './util.js'

const FILES = Number(process.env.SEARCH_BENCH_FILES ?? 100_000)
const RUNS = Number(process.env.SEARCH_BENCH_RUNS ?? 5)

/** Wall time of each case, `runs` rounds after one warm-up round, cases interleaved per round (ns). */
async function interleaved(cases: Array<() => Promise<unknown>>, runs = RUNS): Promise<number[][]> {
  for (const fn of cases) await fn()
  const times = cases.map(() => [] as number[])
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of cases.entries()) {
      const start = process.hrtime.bigint()
      await fn()
      times[k].push(Number(process.hrtime.bigint() - start))
    }
  }
  return times
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** Spawn rg and drain its output, like any caller would. */
function rg(binary: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
    let bytes = 0
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length
    })
    child.on('error', reject)
    child.on('close', () => resolve(bytes))
  })
}

async function generateTree(files: number): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()
  const dir = await mkdtemp(path.join(base, 'toolgate-search-bench-'))
  // 100 directories of 10 subdirectories; 1 in 50 files mentions the needle.
  const perLeaf = Math.ceil(files / 1000)
  let made = 0
  for (let a = 0; a < 100 && made < files; a++) {
    for (let b = 0; b < 10 && made < files; b++) {
      const leaf = path.join(dir, `d${a}`, `s${b}`)
      await mkdir(leaf, { recursive: true })
      const batch: Promise<void>[] = []
      for (let f = 0; f < perLeaf && made < files; f++, made++) {
        const name = path.join(leaf, `file${f}.${f % 3 === 0 ? 'ts' : f % 3 === 1 ? 'js' : 'md'}`)
        const body = `// file ${made}\nexport const value${made} = ${made}\n${made % 50 === 0 ? 'const needle = true\n' : ''}`
        batch.push(
          open(name, 'w').then(async (h) => {
            await h.writeFile(body)
            await h.close()
          }),
        )
      }
      await Promise.all(batch)
    }
  }
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

export async function run(): Promise<void> {
  const toolgate = await loadBuilt()
  // The built module, typed as its source: typecheck runs before `npm run build` in CI.
  const built = new URL('../dist/tools/ripgrep.js', import.meta.url).href
  const { bundledRipgrep } = (await import(built)) as typeof import('../src/tools/ripgrep.js')
  const binary = bundledRipgrep() as string | undefined
  if (binary === undefined) throw new Error('bench: no ripgrep binary for this platform')
  const started = Date.now()
  const tree = await generateTree(FILES)
  console.log(`\n(generated ${FILES.toLocaleString('en-US')} files in ${((Date.now() - started) / 1000).toFixed(1)} s)`)
  const long = await mkdtemp(path.join(tmpdir(), 'toolgate-search-bench-long-'))
  for (let i = 0; i < 5; i++) await writeFile(path.join(long, `min${i}.js`), `${'needle;'.repeat(100_000)}\n`)
  const modules = path.resolve(new URL('..', import.meta.url).pathname, 'node_modules')
  const trees = [
    {
      label: `generated tree (${FILES.toLocaleString('en-US')} files)`,
      dir: tree.dir,
      pattern: 'needle',
      glob: '**/*.ts',
    },
    { label: 'node_modules of this repository', dir: modules, pattern: 'function\\s+\\w+Error', glob: '**/*.d.ts' },
    {
      label: 'minified-style lines (5 files, 100,000 hits on one line each)',
      dir: long,
      pattern: 'needle',
      glob: '*.js',
    },
  ]
  const signal = new AbortController().signal
  const exec = (name: string, args: unknown) =>
    ({
      callId: 'bench',
      rootCallId: 'bench',
      name,
      arguments: args,
      signal,
      token: Symbol('bench'),
      deferContext() {},
      concludeTurn() {},
      progress() {},
    }) as never
  try {
    for (const t of trees) {
      const tools = toolgate.createFsTools({
        root: t.dir,
        limits: { walkMaxEntries: 10_000_000, grepMaxFiles: 10_000_000 },
      })
      const grep = tools.find((d) => d.name === 'grep')!
      const globTool = tools.find((d) => d.name === 'glob')!
      const sameFlags = [
        '--json',
        '--no-config',
        '--no-require-git',
        '--hidden',
        '--sort=path',
        '--max-filesize=8388608',
        '--glob=!.git',
        '--glob=!node_modules',
        '--regexp',
        t.pattern,
        '--',
        '.',
      ]
      const names = [
        'toolgate grep (rg --json, sorted, parsed, capped)',
        'bare rg, same flags (output drained)',
        'bare rg --json, parallel (no --sort)',
        'toolgate glob (tinyglobby + .gitignore + budget)',
        'bare tinyglobby, same ignores',
      ]
      const times = await interleaved([
        () => grep.execute({ pattern: t.pattern }, exec('grep', { pattern: t.pattern })),
        () => rg(binary, sameFlags, t.dir),
        () =>
          rg(
            binary,
            sameFlags.filter((a) => a !== '--sort=path'),
            t.dir,
          ),
        () => globTool.execute({ pattern: t.glob }, exec('glob', { pattern: t.glob })),
        () => glob([t.glob], { cwd: t.dir, ignore: ['**/node_modules/**', '**/.git/**'], followSymbolicLinks: false }),
      ])
      const ratio = (a: number, b: number) => `${median(times[a].map((x, i) => x / times[b][i])).toFixed(2)}×`
      console.log(`\n## Search: ${t.label}\n`)
      console.log(`| case | median of ${RUNS} (interleaved) | ratio (median of per-round ratios) |`)
      console.log('| --- | ---: | ---: |')
      console.log(`| ${names[0]} | ${format(median(times[0]))} | ${ratio(0, 1)} of bare rg |`)
      console.log(`| ${names[1]} | ${format(median(times[1]))} | 1.00× |`)
      console.log(`| ${names[2]} | ${format(median(times[2]))} | ${ratio(2, 1)} |`)
      console.log(`| ${names[3]} | ${format(median(times[3]))} | ${ratio(3, 4)} of bare tinyglobby |`)
      console.log(`| ${names[4]} | ${format(median(times[4]))} | 1.00× |`)
    }
  } finally {
    await tree.cleanup()
    await rm(long, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run()
