/**
 * Packs toolgate once and type-checks it the way users compile against it: the published
 * package, not our sources, with `strict` and `skipLibCheck: false`, under NodeNext, Node16 and
 * Bundler resolution. Scratch consumers install the same tarball (dependencies come from the
 * npm cache `npm ci` filled): one with no provider SDK, and one per SDK major with only that SDK
 * (the newer majors from their npm-alias pins), each of which must pass `npm ls`. Each
 * compiles the samples of scripts/consumer/ it can: sample.ts and entries.ts everywhere (every
 * SDK-free entry point), plus the sample of its own SDK's subpath and the guide programs that use
 * that SDK (a page's code blocks, extracted; once more with `tsc --init`'s stricter options). No type packages at all (only
 * TypeScript's ES + DOM libs), so a declaration that names `NodeJS.*` fails here; one more
 * NodeNext run adds @types/node, the usual Node setup. Every entry point of package.json must be
 * imported by some sample. The tsc runs go in parallel, one per core. Run after `npm run build`.
 */
import { execFile, execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pageBlocks } from './sync-guide.js'

const root = resolve(fileURLToPath(import.meta.url), '../..')
const samples = join(root, 'scripts/consumer')
const tsc = join(root, 'node_modules/typescript/bin/tsc')
if (!existsSync(join(root, 'dist/index.d.ts'))) throw new Error('check:consumer: run `npm run build` first')

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const work = mkdtempSync(join(tmpdir(), 'toolgate-consumer-'))
const keep = process.argv.includes('--keep')
const problems: string[] = []
const started = performance.now()

/** The samples every consumer compiles, and each SDK's own sample (by package name). */
const COMMON = ['sample.ts', 'entries.ts']
const SDK_SAMPLES: Record<string, string> = {
  openai: 'openai.ts',
  '@anthropic-ai/sdk': 'anthropic.ts',
  '@google/genai': 'gemini.ts',
  ai: 'ai-sdk.ts',
  '@openai/agents': 'openai-agents.ts',
}
/**
 * The newer majors, pinned in package.json as npm aliases (issue 42): each gets its own consumer
 * too, with only that SDK installed under its real name.
 */
const NEXT_MAJORS: Record<string, string> = { openai: 'openai7', ai: 'ai7', '@google/genai': 'genai3' }
/**
 * What an SDK's own declarations need beside it under `strict` and `skipLibCheck: false`: `ai`'s
 * name `node:http` and `Buffer`, and its provider package imports `json-schema`'s types untyped.
 */
const SDK_COMPANIONS: Record<string, { packages: string[]; types: string[]; options?: Record<string, unknown> }> = {
  ai: { packages: ['@types/node', '@types/json-schema'], types: ['node'] },
  // @openai/agents 0.20's own lifecycle.d.ts does not compile under `skipLibCheck: false` (its
  // EventEmitter shim against Node's), whatever the consumer imports: its consumer skips lib
  // checks, so only the sample's use of toolgate's and the SDK's types is checked (issue 42).
  '@openai/agents': { packages: [], types: [], options: { skipLibCheck: true } },
}

/**
 * Guide pages that show one whole program: their `ts` blocks joined, compiled as `file` by the
 * consumer that has only `sdk` installed (and no @types/node), so the page is what type-checks.
 */
const GUIDE_PROGRAMS: ReadonlyArray<{ page: string; file: string; sdk: string }> = [
  { page: 'docs/guide/recipes/build-a-coding-agent.md', file: 'coding-agent.ts', sdk: 'openai' },
]
/**
 * What `tsc --init` (TypeScript 5.9) turns on beyond `strict`: a new user's project compiles the
 * guide programs with these too.
 */
const TSC_INIT_EXTRAS = {
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  noUncheckedSideEffectImports: true,
  moduleDetection: 'force',
}

const NPM_FLAGS = ['--no-audit', '--no-fund', '--loglevel=error']

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, ...NPM_FLAGS], { cwd, encoding: 'utf8' })
}

function npmAsync(args: string[], cwd: string): Promise<void> {
  return new Promise((done, fail) => {
    execFile('npm', [...args, ...NPM_FLAGS], { cwd, encoding: 'utf8' }, (error, _stdout, stderr) =>
      error ? fail(new Error(`npm ${args.join(' ')} in ${cwd}: ${stderr || error.message}`)) : done(),
    )
  })
}

function pin(name: string): string {
  const version = pkg.devDependencies[name]
  return version === undefined ? name : `${name}@${version}`
}

/** `openai7` (devDependency `npm:openai@7.60.0`) as `openai@7.60.0`. */
function pinAlias(alias: string): string {
  const spec: unknown = pkg.devDependencies[alias]
  if (typeof spec !== 'string' || !spec.startsWith('npm:'))
    throw new Error(`check:consumer: devDependency ${alias} is not an npm: alias`)
  return spec.slice('npm:'.length)
}

function elapsed(): string {
  return `${((performance.now() - started) / 1000).toFixed(1)} s`
}

interface Check {
  readonly app: string
  readonly label: string
  readonly files: readonly string[]
  readonly options: Record<string, unknown>
}

function typecheck({ app, label, files, options }: Check): Promise<void> {
  const config = join(app, `tsconfig.${label.replace(/\W+/g, '-')}.json`)
  // skipDefaultLibCheck skips only TypeScript's own lib.*.d.ts (a quarter of each run's CPU, lib.dom
  // most of it): they are the same in every run; toolgate's and its dependencies' declarations are
  // all still checked (skipLibCheck: false).
  const compilerOptions = {
    target: 'ES2022',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    skipDefaultLibCheck: true,
    ...options,
  }
  writeFileSync(config, JSON.stringify({ compilerOptions, files }))
  return new Promise((done) => {
    execFile(process.execPath, [tsc, '-p', config], { cwd: app, encoding: 'utf8' }, (error, stdout) => {
      if (error) problems.push(`consumer types (${label}) failed:\n${stdout || String(error)}`)
      else console.log(`consumer types (${label}): ok`)
      done()
    })
  })
}

async function runAll(checks: readonly Check[]): Promise<void> {
  const queue = [...checks]
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await typecheck(next)
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(availableParallelism(), 4)) }, worker))
}

/** Every `toolgate…` specifier the samples import, to prove each entry point is compiled somewhere. */
function importedEntries(): Set<string> {
  const seen = new Set<string>()
  for (const file of [...COMMON, ...Object.values(SDK_SAMPLES)]) {
    const source = readFileSync(join(samples, file), 'utf8')
    for (const match of source.matchAll(/from '(toolgate(?:\/[\w/-]+)?)'/g)) seen.add(match[1])
  }
  return seen
}

try {
  const entries = Object.keys(pkg.exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? 'toolgate' : key.replace(/^\./, 'toolgate')))
  const imported = importedEntries()
  for (const entry of entries)
    if (!imported.has(entry)) problems.push(`no sample in scripts/consumer imports the entry point ${entry}`)

  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], root)) as Array<{
    filename: string
    files: Array<{ path: string }>
  }>
  const shipped = packed.files.map((file) => file.path)
  // Maps would point at src/, which is not shipped.
  for (const path of shipped) if (path.endsWith('.map')) problems.push(`the package ships a source map: ${path}`)
  if (!shipped.includes('LICENSE')) problems.push('the package ships no LICENSE')

  // The SDK-free consumer first; each SDK consumer starts as a copy of it and adds one package.
  const base = join(work, 'none')
  mkdirSync(base)
  writeFileSync(
    join(base, 'package.json'),
    JSON.stringify({
      name: 'consumer',
      private: true,
      type: 'module',
      dependencies: { toolgate: `file:${join(work, packed.filename)}` },
    }),
  )
  npm(['install', '--prefer-offline', '--ignore-scripts'], base)
  for (const file of [...COMMON, ...Object.values(SDK_SAMPLES)]) copyFileSync(join(samples, file), join(base, file))
  for (const { page, file } of GUIDE_PROGRAMS) writeFileSync(join(base, file), pageBlocks(page, 'ts').join('\n'))
  console.log(`check:consumer: SDK-free consumer installed at ${elapsed()}`)
  const apps: Array<{
    app: string
    name: string
    sdk?: string
    files: string[]
    types: string[]
    extra?: Record<string, unknown>
  }> = [{ app: base, name: 'no SDK', files: COMMON, types: [] }]
  const installs: Promise<void>[] = []
  const variants = Object.entries(SDK_SAMPLES).flatMap(([sdk, sample]) => {
    const next = NEXT_MAJORS[sdk]
    const current = { sdk, sample, spec: pin(sdk), dir: sdk, name: `${sdk} alone` }
    if (next === undefined) return [current]
    return [current, { sdk, sample, spec: pinAlias(next), dir: next, name: `${pinAlias(next)} alone` }]
  })
  for (const { sdk, sample, spec, dir, name } of variants) {
    const app = join(work, dir.replace(/\W+/g, '-'))
    // A hard-linked copy: npm replaces files rather than writing into them, so the base stays intact.
    execFileSync('cp', ['-al', base, app])
    const companions = SDK_COMPANIONS[sdk] ?? { packages: [], types: [] }
    const wanted = [spec, ...companions.packages.map(pin)]
    installs.push(npmAsync(['install', '--prefer-offline', '--ignore-scripts', '--no-save', ...wanted], app))
    const programs = GUIDE_PROGRAMS.filter((program) => program.sdk === sdk).map((program) => program.file)
    apps.push({
      app,
      name,
      sdk,
      files: [...COMMON, sample, ...programs],
      types: companions.types,
      extra: companions.options ?? {},
    })
  }
  await Promise.all(installs)
  console.log(`check:consumer: one consumer per SDK installed at ${elapsed()}`)
  // Each supported major installs cleanly beside toolgate: no invalid or missing peer (issue 42).
  for (const { app, name } of apps) {
    try {
      npm(['ls'], app)
    } catch (error) {
      problems.push(
        `npm ls in the consumer with ${name} failed:\n${(error as { stdout?: string }).stdout ?? String(error)}`,
      )
    }
  }

  const bare = { lib: ['ES2023', 'DOM'] }
  const modes: Array<[string, Record<string, unknown>]> = [
    ['NodeNext', { module: 'NodeNext', moduleResolution: 'NodeNext', ...bare }],
    ['Node16', { module: 'Node16', moduleResolution: 'Node16', ...bare }],
    ['Bundler', { module: 'ESNext', moduleResolution: 'Bundler', ...bare }],
  ]
  const checks: Check[] = apps.flatMap(({ app, name, files, types, extra }) =>
    modes.map(([mode, options]) => ({
      app,
      label: `${mode}, ${name}`,
      files,
      options: { ...options, types, ...extra },
    })),
  )
  for (const { file, sdk } of GUIDE_PROGRAMS) {
    const found = apps.filter((candidate) => candidate.sdk === sdk)
    if (found.length === 0) throw new Error(`check:consumer: no consumer with only ${sdk}`)
    for (const app of found)
      checks.push({
        app: app.app,
        label: `NodeNext + tsc --init options, ${app.name}, ${file}`,
        files: [file],
        options: { module: 'NodeNext', moduleResolution: 'NodeNext', types: [], ...TSC_INIT_EXTRAS },
      })
  }
  // The usual Node setup, on a copy of the SDK-free consumer (the bare ones must not see
  // @types/node): @types/node in use and no DOM lib. Only the root sample: the MCP SDK's
  // declarations name fetch's HeadersInit, which needs the DOM lib.
  const node = join(work, 'none-types-node')
  execFileSync('cp', ['-al', base, node])
  npm(['install', '--prefer-offline', '--ignore-scripts', '--no-save', pin('@types/node')], node)
  checks.push({
    app: node,
    label: 'NodeNext + @types/node, no SDK',
    files: ['sample.ts'],
    options: { module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], types: ['node'] },
  })
  await runAll(checks)
  console.log(`check:consumer: ${checks.length} compilations done at ${elapsed()}`)
} finally {
  if (keep) console.log(`scratch consumers kept at ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
if (problems.length > 0) {
  console.error(problems.join('\n'))
  process.exit(1)
}
