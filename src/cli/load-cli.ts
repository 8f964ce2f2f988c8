// How the `toolgate` executable loads the CLI. An MCP client starts `toolgate serve` anew for every
// session, so its start is paid each time: the built CLI is one CommonJS file beside this module
// (dist/cli/cli.cjs, with its dependencies inside), compiled from V8's code cache that an earlier
// run kept. On Node with a module compile cache (22.1 and later) Node keeps that cache itself; on
// older Node the file is compiled as one script with the cached data. Without the file (running
// from the sources) the CLI loads module by module. A `serve` first runs a small second bundle that
// spawns the upstream servers, so that they start while the big one loads.
import { lstatSync, mkdirSync, readFileSync, type Stats, statSync } from 'node:fs'
import nodeModule, { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'
import { type CacheCheck, hasCrc32, readCacheFile, writeCacheFile } from './cache-file.js'
import { installModuleCodeCache } from './module-code-cache.js'
import { SERVER_INFO } from './version.js'

type Cli = typeof import('./main.js')
type First = typeof import('../gateway/index.js')

/** The bundle's file name beside this module (written by scripts/bundle-cli.mjs). */
const BUNDLE = 'cli.cjs'

/**
 * The small bundle a `serve` runs first (written by scripts/bundle-cli.mjs too): it reads the flags
 * and the config and spawns the upstream servers, whose start then overlaps loading the big one.
 */
const FIRST = 'serve-early.cjs'

/** How long after the start a missing cache is written: the start's code is compiled by then. */
const KEEP_AFTER_MS = 1000

/**
 * Load the CLI that is about to run `argv`. Each kind of run keeps its own cache (a cache holds
 * what its first run compiled, so a `--help` must not stand for a `serve`).
 */
export async function loadCli(argv: readonly string[]): Promise<Cli> {
  const file = fileURLToPath(new URL(`./${BUNDLE}`, import.meta.url))
  const stat = statSync(file, { throwIfNoEntry: false })
  if (stat === undefined) return import('./main.js')
  const { load, loadFirst } = bundleLoader(argv)
  // Windows keeps spawning from the CLI itself (see serve-spawn.ts).
  if (argv[0] === 'serve' && process.platform !== 'win32') {
    const first = fileURLToPath(new URL(`./${FIRST}`, import.meta.url))
    const firstStat = statSync(first, { throwIfNoEntry: false })
    try {
      if (firstStat !== undefined) await (loadFirst(first, firstStat) as First).spawnBeforeLoad(argv, SERVER_INFO)
    } catch {
      // Only a head start: the CLI spawns whatever was not spawned, and reports what is wrong.
    }
  }
  return load(file, stat, kindOf(argv)) as Cli
}

/**
 * How this process loads a bundle: on Node with a module compile cache (22.1 and later) Node keeps
 * the compiled code; on older Node each bundle runs as one script from our cache (`kind` names
 * which), and the packages the bundles leave outside compile from a cache of their own; without
 * a cache directory it is required as it is.
 */
function bundleLoader(argv: readonly string[]): BundleLoader {
  const dir = cacheDir()
  const required = (file: string) => createRequire(file)(file)
  const enableCompileCache = (nodeModule as { enableCompileCache?: (directory?: string) => unknown }).enableCompileCache
  if (typeof enableCompileCache === 'function') {
    if (dir !== undefined) {
      try {
        enableCompileCache(dir)
      } catch {
        // Without the cache it only loads slower.
      }
    }
    return { load: required, loadFirst: required }
  }
  if (dir === undefined) return { load: required, loadFirst: required }
  const own = fileURLToPath(new URL('../', import.meta.url))
  installModuleCodeCache(path.join(dir, `modules-${hashOf(own)}-${kindOf(argv)}.v8`), own)
  return {
    load: (file, stat, kind) => runCached(file, stat, path.join(dir, `cli-${hashOf(file)}-${kind}.v8`)),
    // The first script's cache is checked by CRC-32, not SHA-256: node:crypto (≈ 4 ms to load) must
    // not come before the spawn, and node:zlib's crc32 costs a fraction of what the cache saves.
    // Where this Node has no crc32 (before 20.15) it is required as it is.
    loadFirst: (file, stat) =>
      hasCrc32()
        ? runCached(file, stat, path.join(dir, `cli-${hashOf(file)}-serve-early.v8`), 'crc32')
        : required(file),
  }
}

/** How this process loads the CLI bundle (`kind` names its cache) and the first script of a `serve`. */
interface BundleLoader {
  readonly load: (file: string, stat: Stats, kind: string) => unknown
  readonly loadFirst: (file: string, stat: Stats) => unknown
}

/**
 * Where compiled code is kept: a directory of the user's own under the OS temp directory, or
 * undefined when there is none to use (then nothing is cached and nothing fails). Code read from
 * there runs as this process, so a directory someone else owns or can write to is not used.
 */
function cacheDir(): string | undefined {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined
  const uid = process.getuid?.()
  const dir = path.join(tmpdir(), uid === undefined ? 'toolgate-compile-cache' : `toolgate-compile-cache-${uid}`)
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const info = lstatSync(dir)
    if (!info.isDirectory()) return undefined
    if (uid !== undefined && (info.uid !== uid || (info.mode & 0o022) !== 0)) return undefined
    return dir
  } catch {
    return undefined
  }
}

/**
 * Run the bundle as one script, compiled from the cached data when the cache was written for this
 * very file (path, size, modification time) by this very Node and reads back whole; otherwise
 * compiled afresh, and the cache written once the start is done (or at exit, if that comes first).
 */
function runCached(file: string, stat: Stats, cacheFile: string, check: CacheCheck = 'sha256'): unknown {
  const identity = JSON.stringify([file, stat.size, stat.mtimeMs, process.version, process.arch])
  const cachedData = readCacheFile(cacheFile, identity, check)?.data
  // The wrapper sits on the bundle's first line, so line numbers in stack traces stay the file's.
  // The bundle has no `import()` (the build turns them into requires), which a script compiled
  // from cached data could not hand to Node's loader.
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`,
    { filename: file, cachedData },
  )
  const module = { exports: {} as unknown }
  ;(script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(file),
    module,
    file,
    path.dirname(file),
  )
  if (cachedData === undefined || script.cachedDataRejected === true) keepLater(script, cacheFile, identity, check)
  return module.exports
}

/** Write the script's compiled code once, after the start or at exit; a failure only means no cache. */
function keepLater(script: vm.Script, cacheFile: string, identity: string, check: CacheCheck): void {
  let kept = false
  const keep = () => {
    if (kept) return
    kept = true
    clearTimeout(timer)
    process.off('exit', keep)
    let data: Buffer
    try {
      data = script.createCachedData()
    } catch {
      return
    }
    writeCacheFile(cacheFile, identity, data, {}, check)
  }
  const timer = setTimeout(keep, KEEP_AFTER_MS)
  timer.unref()
  process.once('exit', keep)
}

/** Which cache a run uses: serving (what MCP clients start), checking the upstreams, or anything else. */
function kindOf(argv: readonly string[]): string {
  if (argv[0] !== 'serve') return 'other'
  return argv.includes('--check') ? 'serve-check' : 'serve'
}

/** A short name for the bundle's path (FNV-1a, 32 bits): one cache file per installed bundle. */
function hashOf(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}
