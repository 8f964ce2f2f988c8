// `toolgate serve` over stdio, spawned from the built package and driven by the real MCP SDK client.
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  await writeFile(path.join(dir, 'hello.txt'), 'hello\nworld\n')
})
afterAll(() => cleanup())

describe('toolgate serve --mode native (stdio)', () => {
  let s: Connected
  beforeAll(async () => {
    s = await serveStdio(['--root', dir])
  })
  afterAll(() => s.close())

  it('lists the fs tools with input schemas, object output schemas and annotations', async () => {
    const { tools } = await s.client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      'edit_file',
      'glob',
      'grep',
      'list_dir',
      'read_file',
      'write_file',
    ])
    const read = tools.find((t) => t.name === 'read_file')!
    expect(read.inputSchema.type).toBe('object')
    expect(read.inputSchema.properties).toHaveProperty('path')
    expect(read.outputSchema?.type).toBe('object')
    expect(read.annotations?.readOnlyHint).toBe(true)
    expect(tools.find((t) => t.name === 'write_file')!.annotations?.destructiveHint).toBe(true)
  })

  it('calls read_file and write_file; object outputs come back as structuredContent', async () => {
    const read = await s.client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } })
    expect(read.isError).toBeFalsy()
    expect(textOf(read)).toContain('world')
    expect(read.structuredContent).toBeTypeOf('object')

    const write = await s.client.callTool({ name: 'write_file', arguments: { path: 'out/new.txt', content: 'fresh' } })
    expect(write.isError).toBeFalsy()
    expect(await readFile(path.join(dir, 'out/new.txt'), 'utf8')).toBe('fresh')
  })

  it('reports a failed call as an error result, never a protocol error', async () => {
    const outside = await s.client.callTool({ name: 'read_file', arguments: { path: '../../etc/passwd' } })
    expect(outside.isError).toBe(true)
    const unknown = await s.client.callTool({ name: 'nope', arguments: {} })
    expect(unknown.isError).toBe(true)
    expect(textOf(unknown)).toMatch(/nope/)
  })
})

describe('toolgate serve --mode code (stdio)', () => {
  let s: Connected
  beforeAll(async () => {
    s = await serveStdio(['--root', dir, '--mode', 'code'])
  })
  afterAll(() => s.close())

  it('presents only run_code, whose description carries the typed SDK', async () => {
    const { tools } = await s.client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['run_code'])
    expect(tools[0].description).toContain('read_file')
    expect(tools[0].description).toContain('ToolArgsMap')
  })

  it('runs a program that calls two tools', async () => {
    const code = `
      await tools.write_file({ path: 'code.txt', content: 'from the sandbox' })
      const read = await tools.read_file({ path: 'code.txt' })
      return read`
    const result = await s.client.callTool({ name: 'run_code', arguments: { description: 'write then read', code } })
    expect(result.isError).toBeFalsy()
    expect(textOf(result)).toContain('from the sandbox')
    expect(await readFile(path.join(dir, 'code.txt'), 'utf8')).toBe('from the sandbox')
  })

  it('refuses a direct call to a tool other than run_code', async () => {
    const result = await s.client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/run_code/)
  })
})

describe('a denied glob (config policy)', () => {
  let s: Connected
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      { root: '.', mode: 'both', policy: { deny: ['write_*', 'edit_*'] } },
      'deny.json',
    )
    s = await serveStdio(['--config', config])
  })
  afterAll(() => s.close())

  it('hides the tool from the list and from the Code Mode SDK', async () => {
    const { tools } = await s.client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toContain('read_file')
    expect(names).toContain('run_code')
    expect(names).not.toContain('write_file')
    expect(names).not.toContain('edit_file')
    expect(tools.find((t) => t.name === 'run_code')!.description).not.toContain('write_file')
  })

  it('refuses a direct call and a call from a program', async () => {
    const direct = await s.client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } })
    expect(direct.isError).toBe(true)
    const program = await s.client.callTool({
      name: 'run_code',
      arguments: {
        description: 'try to write',
        code: `try { await tools.write_file({ path: 'x.txt', content: 'x' }); return 'wrote' } catch (e) { return 'refused: ' + e.message }`,
      },
    })
    expect(textOf(program)).toContain('refused')
    await expect(readFile(path.join(dir, 'x.txt'), 'utf8')).rejects.toThrow()
  })
})
