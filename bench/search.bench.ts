// grep and glob on real trees: toolgate's tools (built package) vs the bare engines they run,
// side by side in one process: `rg` spawned with the same flags (and with its defaults), and a
// bare tinyglobby call with the same ignores. Trees: a generated 100,000-file tree and this
// repository's node_modules.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { glob } from 'tinyglobby'
import { format, isMain, loadBuilt } from './util.js'

const FILES = Number(process.env.SEARCH_BENCH_FILES ?? 100_000)
const RUNS = Number(process.env.SEARCH_BENCH_RUNS ?? 5)

/** Median wall time of `runs` calls after one warm-up, in ns. */
async function median(fn: () => Promise<unknown>, runs = RUNS): Promise<number> {
  await fn()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint()
    await fn()
    times.push(Number(process.hrtime.bigint() - start))
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

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
  const modules = path.resolve(new URL('..', import.meta.url).pathname, 'node_modules')
  const trees = [
    {
      label: `generated tree (${FILES.toLocaleString('en-US')} files)`,
      dir: tree.dir,
      pattern: 'needle',
      glob: '**/*.ts',
    },
    { label: 'node_modules of this repository', dir: modules, pattern: 'function\\s+\\w+Error', glob: '**/*.d.ts' },
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
      const rows: Array<[string, number]> = []
      rows.push([
        'toolgate grep (rg --json, sorted, parsed, capped)',
        await median(() => grep.execute({ pattern: t.pattern }, exec('grep', { pattern: t.pattern }))),
      ])
      rows.push(['bare rg, same flags (output drained)', await median(() => rg(binary, sameFlags, t.dir))])
      rows.push([
        'bare rg --json, parallel (no --sort)',
        await median(() =>
          rg(
            binary,
            sameFlags.filter((a) => a !== '--sort=path'),
            t.dir,
          ),
        ),
      ])
      rows.push([
        'toolgate glob (tinyglobby + .gitignore + budget)',
        await median(() => globTool.execute({ pattern: t.glob }, exec('glob', { pattern: t.glob }))),
      ])
      rows.push([
        'bare tinyglobby, same ignores',
        await median(() =>
          glob([t.glob], { cwd: t.dir, ignore: ['**/node_modules/**', '**/.git/**'], followSymbolicLinks: false }),
        ),
      ])
      console.log(`\n## Search: ${t.label}\n`)
      console.log('| case | median of 5 | ratio |')
      console.log('| --- | ---: | ---: |')
      const [tgGrep, rgSame, rgPar, tgGlob, bareGlob] = rows.map((r) => r[1])
      const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`
      console.log(`| ${rows[0][0]} | ${format(tgGrep)} | ${ratio(tgGrep, rgSame)} of bare rg |`)
      console.log(`| ${rows[1][0]} | ${format(rgSame)} | 1.00× |`)
      console.log(`| ${rows[2][0]} | ${format(rgPar)} | ${ratio(rgPar, rgSame)} |`)
      console.log(`| ${rows[3][0]} | ${format(tgGlob)} | ${ratio(tgGlob, bareGlob)} of bare tinyglobby |`)
      console.log(`| ${rows[4][0]} | ${format(bareGlob)} | 1.00× |`)
    }
  } finally {
    await tree.cleanup()
  }
}

if (isMain(import.meta.url)) await run()
