// The built `toolgate` executable runs the CLI from its one-file bundle (dist/cli/cli.cjs) and
// keeps V8's compiled code of it in a cache directory of the user's own (issue 23, cold start).
import { execFile } from 'node:child_process'
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import nodeModule from 'node:module'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BIN, tempDir } from './helpers.js'

/** Node 22.1 and later keep the cache themselves (module.enableCompileCache); older Node keeps ours. */
const nodeCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function'
const uid = process.getuid?.()
const CACHE = uid === undefined ? 'toolgate-compile-cache' : `toolgate-compile-cache-${uid}`

let dir: string
let cleanup: () => Promise<void>
beforeEach(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterEach(() => cleanup())

/** `toolgate ...args` with the OS temp directory set to `tmp`: its exit code and output. */
function run(args: string[], tmp: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const { NODE_DISABLE_COMPILE_CACHE: _, NODE_COMPILE_CACHE: __, ...rest } = process.env
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...rest, TMPDIR: tmp, ...env }, timeout: 60_000 },
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
    // `serve` keeps its own: a --help does not stand for it. The small first script a `serve` runs
    // (it spawns the upstreams before the CLI loads) keeps none: checking one would cost its spawn
    // the load of node:crypto.
    const serve = await run(['serve', '--check', '--root', dir], dir)
    expect(serve).toMatchObject({ code: 0, stdout: 'no upstream servers in the config\n' })
    const kinds = (await kept(cache)).map((file) => path.basename(file).replace(/^cli-[0-9a-f]+-/, ''))
    expect(kinds.sort()).toEqual(['other.v8', 'serve-check.v8'])
  })

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
