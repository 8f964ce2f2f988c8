// Build step after tsc: bundle each public entry of dist/ in place (shared code split into
// dist/chunks/), so a cold `import 'toolgate'` reads a handful of files instead of ~250 modules.
// Module resolution and compilation per file, not our code, dominated the cold import.
// tsc's per-file modules stay beside the bundle (declarations point at them, and worker entries
// load them); nothing else imports them.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { perModuleImportMetaUrl, tscClassNames } from './bundle-common.mjs'

const dist = fileURLToPath(new URL('../dist/', import.meta.url))
const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
const entries = [
  ...Object.values(pkg.exports).flatMap((target) => (typeof target === 'object' ? [target.import] : [])),
  // The executable as an ES module (running dist/cli/bin.js directly); the `bin` itself is its
  // CommonJS twin, written by bundle-cli.
  './dist/cli/bin.js',
].map((file) => path.resolve(fileURLToPath(new URL('../', import.meta.url)), file))

// Each bundled module keeps the `import.meta.url` of its per-file twin (see bundle-common).
const metaUrl = perModuleImportMetaUrl(dist, 'import.meta.url')

// tsc's per-file modules, read before the bundle overwrites the entries.
const classNames = await tscClassNames(dist)

const result = await build({
  entryPoints: entries,
  outdir: dist,
  outbase: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [metaUrl],
  metafile: true,
  absWorkingDir: fileURLToPath(new URL('../', import.meta.url)),
})

// Errors take their `name` from `new.target.name`, and Cordis labels services by class name, so a
// class esbuild renamed to avoid a collision (`Foo2`) would change behaviour. keepNames would fix
// that by wrapping every closure in a naming call on the hot path; instead, fail the build.
const bundled = (
  await Promise.all(
    Object.keys(result.metafile.outputs).map((file) =>
      readFile(fileURLToPath(new URL(`../${file}`, import.meta.url)), 'utf8'),
    ),
  )
).join('\n')
const renamed = [...classNames].filter((name) => new RegExp(`\\b(?:class|var|let|const) ${name}\\d+\\b`).test(bundled))
if (renamed.length > 0) {
  console.error(`bundle-dist: esbuild renamed classes ${renamed.join(', ')}; give them unique names`)
  process.exit(1)
}
