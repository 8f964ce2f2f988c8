// V8's code cache for the CommonJS packages the CLI bundle leaves outside (the MCP SDK v2 client and
// server, the SDK core, zod 4), on Node without a module compile cache (before
// 22.1). Node compiles each of those files afresh at every start there (≈ 115 files, 3.3 MB, for
// a `serve` with an upstream). Each file is compiled as one script with the cached data
// an earlier run kept, all of them in one cache file (one read, one digest). On newer Node,
// `module.enableCompileCache` covers them and this is not installed.
import { statSync } from 'node:fs'
import nodeModule, { createRequire } from 'node:module'
import path from 'node:path'
import vm from 'node:vm'
import { readCacheFile, writeCacheFile } from './cache-file.js'

/** The part of Node's CommonJS `Module` this reaches: the one step that compiles and runs a file. */
interface CompilingModule {
  exports: unknown
  require(id: string): unknown
  _compile(content: string, filename: string): unknown
}

/** What one file's entry in the cache file says: where it was, its size and time, its data's length. */
type Entry = [filename: string, size: number, mtimeMs: number, length: number]

/** A file compiled this run (or kept from the last write), ready to be written again. */
interface Kept {
  size: number
  mtimeMs: number
  data: () => Buffer
}

/** How long after installing the first write waits: the start's modules are compiled by then. */
const KEEP_AFTER_MS = 1000

// A real `import()` in a file: a script compiled by us could not hand it to Node's loader on Node 20
// (only an experimental option can, with a warning). Such files are left to Node. `{import(` is
// the JSDoc type syntax, not a call; a comment that says `import()` only costs its file the cache.
// The scan starts at the literal (a fast search over megabytes), then looks at the character before.
const IMPORT_CALL = /import\s*\(/g
const NOT_A_CALL_AFTER = /[.\w$'"{]/

function hasDynamicImport(content: string): boolean {
  IMPORT_CALL.lastIndex = 0
  for (let match = IMPORT_CALL.exec(content); match !== null; match = IMPORT_CALL.exec(content))
    if (match.index === 0 || !NOT_A_CALL_AFTER.test(content[match.index - 1])) return true
  return false
}

/**
 * Compile the CommonJS files under a `node_modules` directory (and not under `own`, toolgate's own
 * dist) from `cacheFile`, and write it once the start is done (and at exit, when something new
 * was compiled since). Reading the cache, checking it and loading node:crypto for that wait for
 * the first such file, so nothing of it comes before what runs first. A cache that is missing,
 * damaged, from another Node or for a changed file is ignored file by file; a cache that cannot be
 * written only means none next time.
 */
export function installModuleCodeCache(cacheFile: string, own: string): void {
  const proto = (nodeModule as unknown as { prototype: CompilingModule }).prototype
  const compile = proto._compile
  const identity = JSON.stringify([process.version, process.arch])
  const kept = new Map<string, Kept>()
  let cached: Map<string, { size: number; mtimeMs: number; data: Buffer }> | undefined
  let dirty = false

  proto._compile = function (this: CompilingModule, content: string, filename: string): unknown {
    if (
      !filename.includes(`${path.sep}node_modules${path.sep}`) ||
      filename.startsWith(own) ||
      content.startsWith('#!') ||
      hasDynamicImport(content)
    )
      return compile.call(this, content, filename)
    cached ??= readModuleCache(cacheFile, identity)
    const stat = statSync(filename, { throwIfNoEntry: false })
    if (stat === undefined) return compile.call(this, content, filename)
    const entry = cached.get(filename)
    const cachedData =
      entry !== undefined && entry.size === stat.size && entry.mtimeMs === stat.mtimeMs ? entry.data : undefined
    // The wrapper on the file's first line, as Node's own, so line numbers stay the file's.
    const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${content}\n})`, {
      filename,
      cachedData,
    })
    kept.set(filename, { size: stat.size, mtimeMs: stat.mtimeMs, data: () => script.createCachedData() })
    if (cachedData === undefined || script.cachedDataRejected === true) dirty = true
    const local = createRequire(filename)
    const require = Object.assign((id: string) => this.require(id), {
      resolve: local.resolve,
      cache: local.cache,
      main: local.main,
      extensions: local.extensions,
    })
    const wrapper = script.runInThisContext() as (...args: unknown[]) => unknown
    return wrapper.call(this.exports, this.exports, require, this, filename, path.dirname(filename))
  }

  const keep = () => {
    if (!dirty || cached === undefined) return
    dirty = false
    // Files another run of this kind compiled and this one did not (yet) stay in the cache.
    for (const [filename, entry] of cached)
      if (!kept.has(filename)) kept.set(filename, { size: entry.size, mtimeMs: entry.mtimeMs, data: () => entry.data })
    writeModuleCache(cacheFile, identity, kept)
  }
  // Once the start is done, and again at exit for whatever compiled afresh after that.
  setTimeout(keep, KEEP_AFTER_MS).unref()
  process.once('exit', keep)
}

/**
 * The cache file: one header line, `{"identity":…,"sha256":…,"files":[[filename,size,mtimeMs,length],…]}`,
 * then each file's data in that order. V8 checks that data suits this V8 and its flags, not that it
 * is whole: the digest does. Anything wrong gives an empty cache.
 */
function readModuleCache(
  cacheFile: string,
  identity: string,
): Map<string, { size: number; mtimeMs: number; data: Buffer }> {
  const files = new Map<string, { size: number; mtimeMs: number; data: Buffer }>()
  const kept = readCacheFile(cacheFile, identity)
  if (kept === undefined || !Array.isArray(kept.header.files)) return files
  let at = 0
  for (const entry of kept.header.files as unknown[]) {
    if (!isEntry(entry)) return new Map()
    const [filename, size, mtimeMs, length] = entry
    files.set(filename, { size, mtimeMs, data: kept.data.subarray(at, at + length) })
    at += length
  }
  return at === kept.data.length ? files : new Map()
}

function isEntry(value: unknown): value is Entry {
  return (
    Array.isArray(value) &&
    value.length === 4 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'number' &&
    typeof value[2] === 'number' &&
    Number.isSafeInteger(value[3]) &&
    value[3] >= 0
  )
}

/** Write the whole cache at once (see writeCacheFile for why a reader never sees half of it). */
function writeModuleCache(cacheFile: string, identity: string, kept: Map<string, Kept>): void {
  try {
    const entries: Entry[] = []
    const parts: Buffer[] = []
    for (const [filename, { size, mtimeMs, data }] of kept) {
      const bytes = data()
      entries.push([filename, size, mtimeMs, bytes.length])
      parts.push(bytes)
    }
    writeCacheFile(cacheFile, identity, Buffer.concat(parts), { files: entries })
  } catch {
    // V8 could not give a file's data: no cache this time.
  }
}
