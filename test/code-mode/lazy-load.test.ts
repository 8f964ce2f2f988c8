// Importing the package root must not load esbuild or QuickJS: they load with the first run_code.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const recorder = pathToFileURL(join(root, 'test/fixtures/load-recorder.mjs')).href
const dir = mkdtempSync(join(tmpdir(), 'toolgate-lazy-'))

beforeAll(() => {
  // CI builds before testing; a bare `vitest run` on a fresh clone builds here.
  if (!existsSync(join(root, 'dist/index.js'))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Run `body` (an ES module) in a fresh Node process and return every module URL it resolved. */
function loadedModules(name: string, body: string): string[] {
  const logFile = join(dir, `${name}.log`)
  const script = `
    import { register } from 'node:module'
    register(${JSON.stringify(recorder)}, { data: { logFile: ${JSON.stringify(logFile)} } })
    ${body}
    // CommonJS loads (createRequire) bypass the resolve hook; the require cache lists them.
    const { appendFileSync } = await import('node:fs')
    const { createRequire } = await import('node:module')
    const { pathToFileURL } = await import('node:url')
    const cjs = Object.keys(createRequire(import.meta.url).cache).map((file) => pathToFileURL(file).href)
    appendFileSync(${JSON.stringify(logFile)}, cjs.map((url) => url + '\\n').join(''))
  `
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: 'pipe', timeout: 60_000 })
  return readFileSync(logFile, 'utf8').split('\n').filter(Boolean)
}

const heavy = (urls: readonly string[]) =>
  urls.filter((url) => /\/node_modules\/(esbuild|quickjs-emscripten[^/]*|@jitl\/[^/]+)\//.test(url))

describe('lazy loading of the Code Mode engine', () => {
  it('the package root and the toolgate/code-mode subpath load neither esbuild nor QuickJS', () => {
    const urls = loadedModules(
      'root',
      `const root = await import('toolgate'); const code = await import('toolgate/code-mode')
       if (typeof root.createToolRuntime !== 'function' || typeof code.CodeMode !== 'object') throw new Error('exports missing')
       const { tools } = await root.createToolRuntime({ mode: 'code' })
       if (!tools.schemas().some((s) => s.name === 'run_code')) throw new Error('run_code missing')`,
    )
    expect(urls.some((url) => url.endsWith('/dist/index.js'))).toBe(true)
    expect(urls.some((url) => url.endsWith('/dist/code-mode/index.js'))).toBe(true)
    expect(heavy(urls)).toEqual([])
    expect(urls.filter((url) => url.includes('quickjs-engine'))).toEqual([])
  })

  // The process also exits on its own: an idle worker does not keep it alive.
  it('the first run_code loads esbuild on the host thread; QuickJS loads only inside the worker', () => {
    const urls = loadedModules(
      'run',
      `const { createToolRuntime } = await import('toolgate')
       const { tools } = await createToolRuntime({ mode: 'code' })
       const result = await tools.execute({ callId: 'c', name: 'run_code', arguments: { code: 'const n: number = 41; return n + 1', description: 'adds one' }, signal: new AbortController().signal })
       if (result.isError || result.value.result !== 42) throw new Error(JSON.stringify(result))`,
    )
    const loaded = heavy(urls).join('\n')
    expect(loaded).toMatch(/node_modules\/esbuild\//)
    expect(loaded).not.toMatch(/quickjs/)
  })

  it("the first run_code of the 'inline' runtime loads both on the host thread", () => {
    const urls = loadedModules(
      'inline',
      `const { createToolRuntime } = await import('toolgate')
       const { tools } = await createToolRuntime({ mode: 'code', codeMode: { runtime: 'inline' } })
       const result = await tools.execute({ callId: 'c', name: 'run_code', arguments: { code: 'const n: number = 41; return n + 1', description: 'adds one' }, signal: new AbortController().signal })
       if (result.isError || result.value.result !== 42) throw new Error(JSON.stringify(result))`,
    )
    const loaded = heavy(urls).join('\n')
    expect(loaded).toMatch(/node_modules\/esbuild\//)
    expect(loaded).toMatch(/node_modules\/quickjs-emscripten/)
  })

  it('the root loads diff, tinyglobby, picomatch and ignore only when a diff or a walk needs them', () => {
    const lazyDeps = (urls: readonly string[]) =>
      [
        ...new Set(urls.flatMap((url) => /\/node_modules\/(diff|tinyglobby|picomatch|ignore)\//.exec(url)?.[1] ?? [])),
      ].sort()
    expect(lazyDeps(loadedModules('root-deps', `await import('toolgate')`))).toEqual([])
    const used = loadedModules(
      'deps-used',
      `const { createFsTools, createToolRuntime } = await import('toolgate')
       const { mkdtempSync, writeFileSync } = await import('node:fs')
       const { join } = await import('node:path')
       const ws = mkdtempSync(join(${JSON.stringify(dir)}, 'ws-'))
       writeFileSync(join(ws, 'a.txt'), 'one\\n')
       writeFileSync(join(ws, '.gitignore'), 'b.txt\\n')
       const { tools } = await createToolRuntime()
       for (const t of createFsTools({ root: ws })) tools.register(t)
       const signal = new AbortController().signal
       const glob = await tools.execute({ callId: 'g', name: 'glob', arguments: { pattern: '*.[tx]xt' }, signal })
       const edit = await tools.execute({ callId: 'e', name: 'edit_file', arguments: { path: 'a.txt', old_string: 'one', new_string: 'two' }, signal })
       if (glob.isError || edit.isError) throw new Error(JSON.stringify([glob, edit]))`,
    )
    expect(lazyDeps(used)).toEqual(['diff', 'ignore', 'picomatch', 'tinyglobby'])
  })
})
