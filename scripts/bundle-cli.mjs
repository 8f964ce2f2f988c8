// Build step after tsc, before bundle-dist: the CLI as one CommonJS file, dist/cli/cli.cjs, with
// its dependencies inside. `toolgate serve` starts in a new process every time an MCP client
// launches it, and on Node 20 most of that start was the ESM loader resolving, reading and
// compiling ~300 modules (the MCP SDK, zod, ajv, Cordis, our chunks) one by one. One file loads in
// one read and one compile, and a single script can be compiled from V8's code cache
// (src/cli/load-cli.ts), which no ES module can be before Node 22.
// Only the executable uses it: the library entries keep the SDK external (its classes are part of
// their API), so a program importing toolgate and the CLI process never share a copy anyway.
import { readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { perModuleImportMetaUrl, tscClassNames } from './bundle-common.mjs'

const root = fileURLToPath(new URL('../', import.meta.url))
const dist = path.join(root, 'dist/')

// Left to Node at run time: packages that find files beside themselves (ripgrep's binary, the
// QuickJS wasm, esbuild's native binary) or that require optional modules (pg), all loaded late;
// and prom-client, which only `serve --http` loads, so that no other start compiles it; and the MCP
// SDK v2 client, which loads only for an upstream that speaks nothing older than 2026-07-28 (a
// bundle with it inside was 0.9 MB larger for every start), and the v2 server with its node:http
// adapter, which only the first MCP 2026-07-28 request to `serve --http` loads (src/mcp/server/server-modern.ts):
// inside, they grew the bundle by a third.
const EXTERNAL = [
  'esbuild',
  '@vscode/ripgrep',
  '@jitl/*',
  'quickjs-emscripten-core',
  'pg',
  'prom-client',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/node',
]

// As in bundle-dist: a module that reads `import.meta.url` gets the URL of its per-file twin in
// dist/ (assets and `createRequire` resolve from there). The bundle's own URL stands for
// `import.meta.url`, which CommonJS does not have.
const META_URL = '__toolgateCliUrl'
const metaUrl = perModuleImportMetaUrl(dist, META_URL)

// The MCP SDK v2 ships Ajv (its default JSON Schema validator) as ES modules with top-level classes
// (`Scope`, `Name`, …): bundled as they are, they share the bundle's top scope with ours and
// esbuild renames one side. Their CommonJS builds keep those names inside their own wrapper.
const requireHere = createRequire(import.meta.url)
const SDK_V2_AJV = /^@modelcontextprotocol\/(server|client)\/(_shims|validators\/ajv)$/
const sdkAjvAsCommonJs = {
  name: 'sdk-ajv-as-commonjs',
  setup(b) {
    b.onResolve({ filter: SDK_V2_AJV }, (args) => ({ path: requireHere.resolve(args.path) }))
  },
}

// The gateway reaches src/mcp through one module, src/mcp/gateway.ts, which re-exports the server,
// the client link and the relay. esbuild keeps every module a live import reaches unless it knows
// the module has no side effects, so serve's early script, which uses two small modules of the
// door, would carry the served scope, the runtime and Cordis with it (0.78 MB instead of 0.45).
// toolgate's MCP modules have no side effects at load (declarations and module-local constants):
// marked so, a bundle keeps only the modules whose exports it uses. Its policy modules neither: the
// config check reaches them through their door, which also re-exports the policy's enforcement,
// whose import of the runtime put the runtime and Cordis in the early script (0.47 MB, 0.27 without).
const withoutSideEffects = ['mcp', 'policy'].map((folder) => path.join(dist, folder) + path.sep)
const ownWithoutSideEffects = {
  name: 'own-modules-without-side-effects',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      const target = path.resolve(args.resolveDir, args.path)
      return withoutSideEffects.some((folder) => target.startsWith(folder))
        ? { path: target, sideEffects: false }
        : undefined
    })
  },
}

// The SDK v2 packages the bundle leaves outside load on first use, not when a module of ours that
// imports them is first run. In one CommonJS bundle every module an entry reaches runs its imports
// when it is first required, and the gateway's door into src/mcp (src/mcp/gateway.ts) brings in the
// server, the relay and the client with the config checks: a `serve --check` without upstreams,
// which never serves nor connects, loaded `@modelcontextprotocol/server` and the protocol's zod
// schemas. A static import of those packages gets, inside the bundle, an object with the package's
// export names (read here, from the installed package the bundle is built against, which
// package.json pins) whose first read requires the package and turns every name into a plain
// value. `import()`s (already lazy) and the packages' own requires are left as they are.
/** A module with `names` whose first read requires `request` and makes every name a plain value. */
function onFirstUse(names, request) {
  return `'use strict'
const names = ${JSON.stringify(names)}
let real
function load() {
  if (real === undefined) {
    real = require(${JSON.stringify(request)})
    for (const name of names) Object.defineProperty(module.exports, name, { value: real[name], enumerable: true })
  }
  return real
}
for (const name of names)
  Object.defineProperty(module.exports, name, { get: () => load()[name], enumerable: true, configurable: true })
`
}
const SDK_ON_FIRST_USE = /^@modelcontextprotocol\/(server|client|node)(\/stdio)?$/
const sdkOnFirstUse = {
  name: 'sdk-on-first-use',
  setup(b) {
    b.onResolve({ filter: SDK_ON_FIRST_USE }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'sdk-on-first-use' } : undefined,
    )
    b.onLoad({ filter: /.*/, namespace: 'sdk-on-first-use' }, (args) => {
      const names = Object.keys(requireHere(args.path)).filter((name) => name !== '__esModule')
      return {
        loader: 'js',
        resolveDir: root,
        contents: onFirstUse(names, args.path),
      }
    })
  },
}

// CEL (@marcbachmann/cel-js, 151 KB of the 270 KB first script) serves only policy `when`
// conditions, which most configs do not have: both bundles get, for it, an object whose first read
// requires dist/cli/cel.cjs (the package bundled alone, below), so a start without a `when` never
// reads, compiles or runs it, before the spawn or after. src/policy/conditions.ts makes its CEL
// environment at the first `when` for the same reason. The package is ES modules only, so its
// export names are read by importing it.
const CEL = '@marcbachmann/cel-js'
const CEL_FILE = 'cel.cjs'
const celOnFirstUse = {
  name: 'cel-on-first-use',
  setup(b) {
    b.onResolve({ filter: /^@marcbachmann\/cel-js$/ }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'cel-on-first-use' } : undefined,
    )
    b.onResolve({ filter: new RegExp(`^\\./${CEL_FILE.replace('.', '\\.')}$`) }, (args) => ({
      path: args.path,
      external: true,
    }))
    b.onLoad({ filter: /.*/, namespace: 'cel-on-first-use' }, async () => {
      const names = Object.keys(await import(CEL)).filter((name) => name !== 'default')
      return {
        loader: 'js',
        resolveDir: root,
        contents: onFirstUse(names, `./${CEL_FILE}`),
      }
    })
  },
}

/** Leaves the executable's `import('./main.js')` to tsc's module beside it instead of bundling the CLI in. */
const besideEntry = {
  name: 'beside-entry',
  setup(b) {
    b.onResolve({ filter: /^\.\/main\.js$/ }, (args) => ({ path: args.path, external: true }))
  },
}

// Class names from tsc's per-file modules: a class esbuild renamed to avoid a collision (`Foo2`)
// would change error names and Cordis service labels (see bundle-dist).
const classNames = await tscClassNames(dist)

// The CLI, and the small script a `serve` runs before it: the flag and config checks and the
// spawning of the stdio upstream servers (src/gateway/serve-early.ts), so the upstreams start before the
// big bundle is read and compiled (src/cli/load-cli.ts).
// CEL alone, required by the two bundles at the first `when` (celOnFirstUse).
await build({
  stdin: { contents: `export * from '${CEL}'`, resolveDir: root, loader: 'js' },
  outfile: path.join(dist, 'cli', CEL_FILE),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  banner: { js: `'use strict';` },
  logLevel: 'warning',
  absWorkingDir: root,
})
await bundle('cli/main.js', 'cli/cli.cjs')
// The gateway's own file tools as `serve` lists them, for the first script's listing: their JSON
// Schemas are projected by the runtime, which it does not load (src/gateway/raw-first-own.ts). Made
// by the gateway's own code, from tsc's modules; a test compares the file with the live listing.
const { listOwnFileTools, OWN_TOOLS_FILE } = await import(
  pathToFileURL(path.join(dist, 'gateway/own-tools-listing.js')).href
)
await writeFile(path.join(dist, 'gateway', OWN_TOOLS_FILE), `${JSON.stringify(await listOwnFileTools())}\n`)
await bundle('gateway/serve-early.js', 'cli/serve-early.cjs')
// And the executable itself (the `bin` of package.json) as CommonJS: Node starts a CommonJS entry
// without its ES module loader. It holds only src/cli/load-cli.ts, which loads the two above; its
// `import('./main.js')` (running without the bundle) stays an import of tsc's module beside it.
await bundle('cli/bin.js', 'cli/bin.cjs', { entry: true })

async function bundle(entry, out, { entry: isEntry = false } = {}) {
  const outfile = path.join(dist, out)
  await build({
    entryPoints: [path.join(dist, entry)],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL,
    plugins: isEntry
      ? [metaUrl, besideEntry]
      : [metaUrl, sdkAjvAsCommonJs, sdkOnFirstUse, celOnFirstUse, ownWithoutSideEffects],
    // Every `import()` becomes a require (of Node's built-ins and of the packages left outside): a
    // script compiled from V8's cached data cannot hand an `import()` to Node's loader on Node 20.
    // The entry is not such a script: Node loads it itself.
    ...(isEntry ? {} : { supported: { 'dynamic-import': false } }),
    // ES modules are strict; so is the bundle (its CommonJS dependencies already say so themselves).
    banner: { js: `'use strict';\nvar ${META_URL} = require('node:url').pathToFileURL(__filename).href;` },
    logLevel: 'warning',
    absWorkingDir: root,
  })

  const bundled = await readFile(outfile, 'utf8')
  if (!isEntry && /\bimport\(/.test(bundled)) {
    console.error(`bundle-cli: an import() is left in dist/${out}; the cached script cannot run it on Node 20`)
    process.exit(1)
  }
  if (bundled.includes('import.meta')) {
    console.error(`bundle-cli: import.meta is left in dist/${out}, where CommonJS does not have it`)
    process.exit(1)
  }
  // Only our own modules are checked (esbuild heads each module, `.cjs` and `.mjs` ones included,
  // with a `// path` comment): a dependency's class renamed inside its own wrapper (ajv's internal
  // Scope) is no concern of ours.
  const ours = bundled
    .split(/^\/\/ (?=\S+\.[cm]?js$)/m)
    .filter((part) => part.startsWith('dist/'))
    .join('\n')
  const renamed = [...classNames].filter((name) =>
    new RegExp(`\\b(?:class|var|let|const) ${name}\\d+\\b|\\b${name}\\d+ = class\\b`).test(ours),
  )
  if (renamed.length > 0) {
    console.error(`bundle-cli: esbuild renamed classes ${renamed.join(', ')} in dist/${out}; give them unique names`)
    process.exit(1)
  }
}
