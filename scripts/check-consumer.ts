/**
 * Packs toolgate, installs the tarball into a scratch consumer (its dependencies come from the
 * npm cache `npm ci` filled), and type-checks scripts/consumer/sample.ts under NodeNext, Node16
 * and Bundler resolution with `skipLibCheck: false`: what a user compiles against is the
 * published package, not our sources. The three modes run with no type packages at all (only
 * TypeScript's own ES + DOM libs), so a declaration that names `NodeJS.*` fails here; one more
 * NodeNext run adds @types/node, the usual Node setup. Run after `npm run build`.
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(fileURLToPath(import.meta.url), '../..')
const tsc = join(root, 'node_modules/typescript/bin/tsc')
if (!existsSync(join(root, 'dist/index.d.ts'))) throw new Error('check:consumer: run `npm run build` first')

const work = mkdtempSync(join(tmpdir(), 'toolgate-consumer-'))
const keep = process.argv.includes('--keep')
const problems: string[] = []

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' })
}

function typecheck(app: string, label: string, options: Record<string, unknown>): void {
  const config = join(app, `tsconfig.${label.replace(/\W+/g, '-')}.json`)
  const compilerOptions = { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, ...options }
  writeFileSync(config, JSON.stringify({ compilerOptions, files: ['sample.ts'] }))
  try {
    execFileSync(process.execPath, [tsc, '-p', config], { cwd: app, encoding: 'utf8', stdio: 'pipe' })
    console.log(`consumer types (${label}): ok`)
  } catch (error) {
    const out = (error as { stdout?: string }).stdout || String(error)
    problems.push(`consumer types (${label}) failed:\n${out}`)
  }
}

try {
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], root)) as Array<{
    filename: string
    files: Array<{ path: string }>
  }>
  const shipped = packed.files.map((file) => file.path)
  // Maps would point at src/, which is not shipped.
  for (const path of shipped) if (path.endsWith('.map')) problems.push(`the package ships a source map: ${path}`)
  if (!shipped.includes('LICENSE')) problems.push('the package ships no LICENSE')

  const app = join(work, 'app')
  mkdirSync(app)
  const types = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies['@types/node']
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'consumer',
      private: true,
      type: 'module',
      dependencies: { toolgate: `file:../${packed.filename}` },
    }),
  )
  npm(['install', '--prefer-offline', '--ignore-scripts'], app)
  copyFileSync(join(root, 'scripts/consumer/sample.ts'), join(app, 'sample.ts'))
  const bare = { lib: ['ES2023', 'DOM'], types: [] }
  typecheck(app, 'NodeNext', { module: 'NodeNext', moduleResolution: 'NodeNext', ...bare })
  typecheck(app, 'Node16', { module: 'Node16', moduleResolution: 'Node16', ...bare })
  typecheck(app, 'Bundler', { module: 'ESNext', moduleResolution: 'Bundler', ...bare })
  npm(['install', '--prefer-offline', '--ignore-scripts', '--no-save', `@types/node@${types}`], app)
  typecheck(app, 'NodeNext + @types/node', {
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023'],
    types: ['node'],
  })
} finally {
  if (keep) console.log(`scratch consumer kept at ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
if (problems.length > 0) {
  console.error(problems.join('\n'))
  process.exit(1)
}
