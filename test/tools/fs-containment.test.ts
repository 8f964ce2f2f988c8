// #11: file tools never block on a FIFO and never follow a symlink swapped in after the check.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createFsTools } from '../../src/tools/index.js'
import { byName, fakeRunContext, tempDir } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }
let outside: { dir: string; cleanup(): Promise<void> }
let tools: ToolDefinition[]
beforeEach(async () => {
  ws = await tempDir('fs11')
  outside = await tempDir('fs11-outside')
  tools = createFsTools({ root: ws.dir })
})
afterEach(async () => {
  await ws.cleanup()
  await outside.cleanup()
})

/** Run a tool, bounding a hang generously: the point is that it must not block at all. */
async function settle(name: string, args: Record<string, unknown>): Promise<{ ok: boolean; message: string }> {
  const tool = byName(tools, name)
  const hang = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('hung')), 10_000))
  try {
    await Promise.race([tool.execute(args, fakeRunContext(name, args)), hang])
    return { ok: true, message: '' }
  } catch (error) {
    return { ok: false, message: (error as Error).message }
  }
}

describe('#11 FIFOs inside the workspace fail fast', () => {
  beforeEach(() => {
    execFileSync('mkfifo', [path.join(ws.dir, 'pipe')])
  })

  it.each([
    ['write_file', { path: 'pipe', content: 'x' }],
    ['edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' }],
    ['read_file', { path: 'pipe' }],
  ])('%s on a FIFO is refused without blocking', async (name, args) => {
    const outcome = await settle(name, args)
    expect(outcome.ok).toBe(false)
    expect(outcome.message).toMatch(/not a regular file|FIFO/)
    expect(outcome.message).not.toBe('hung')
  })

  it('write_file refuses a FIFO that has a reader too (the open succeeds, fstat refuses)', async () => {
    const reader = spawn('sh', ['-c', `cat ${path.join(ws.dir, 'pipe')} > /dev/null`])
    await new Promise((r) => setTimeout(r, 200))
    try {
      const outcome = await settle('write_file', { path: 'pipe', content: 'x' })
      expect(outcome.ok).toBe(false)
      expect(outcome.message).toMatch(/FIFO/)
    } finally {
      reader.kill('SIGKILL')
    }
  })

  it('grep skips a FIFO it meets', async () => {
    writeFileSync(path.join(ws.dir, 'a.txt'), 'needle\n')
    const outcome = await settle('grep', { pattern: 'needle' })
    expect(outcome.ok).toBe(true)
    const direct = await settle('grep', { pattern: 'needle', path: 'pipe' })
    expect(direct.message).not.toBe('hung')
  })
})

describe('#11 symlink-swap race', () => {
  it('a directory swapped for a symlink during a few thousand reads never yields a file outside the root', async () => {
    const sub = path.join(ws.dir, 'sub')
    mkdirSync(sub)
    writeFileSync(path.join(sub, 'f.txt'), 'inside\n')
    writeFileSync(path.join(outside.dir, 'f.txt'), 'OUTSIDE\n')
    const counter = path.join(ws.dir, 'swaps')
    // A concurrent local process flips `sub` between the real directory and a symlink leading out.
    const script = `
      const fs = require('node:fs'); process.chdir(${JSON.stringify(ws.dir)})
      fs.symlinkSync(${JSON.stringify(outside.dir)}, 'link')
      for (let n = 1; ; n++) {
        fs.renameSync('sub', 'real'); fs.renameSync('link', 'sub'); fs.renameSync('sub', 'link'); fs.renameSync('real', 'sub')
        if (n % 100 === 0) { fs.writeFileSync(${JSON.stringify(`${counter}.tmp`)}, String(n)); fs.renameSync(${JSON.stringify(`${counter}.tmp`)}, ${JSON.stringify(counter)}) }
      }`
    const swapper = spawn(process.execPath, ['-e', script], { stdio: 'ignore' })
    // The workspace is removed after the test: wait for the swapper to be gone, not merely signalled,
    // or its last rename races the removal (ENOTEMPTY under load).
    const exited = new Promise<void>((resolve) => swapper.once('exit', () => resolve()))
    await vi.waitFor(() => expect(existsSync(counter)).toBe(true), { timeout: 20_000, interval: 20 })
    const read = byName(tools, 'read_file')
    let inside = 0
    let refused = 0
    let escaped = 0
    try {
      for (let i = 0; i < 3000; i++) {
        try {
          const value = (await read.execute({ path: 'sub/f.txt' }, fakeRunContext('read_file', {}))) as {
            lines: Array<{ text: string }>
          }
          const text = value.lines.map((l) => l.text).join('\n')
          if (text.includes('OUTSIDE')) escaped++
          else inside++
        } catch {
          refused++
        }
      }
    } finally {
      swapper.kill('SIGKILL')
      await exited
    }
    const swaps = Number(readFileSync(counter, 'utf8').trim() || '0')
    expect(escaped).toBe(0)
    expect(inside + refused).toBe(3000)
    // The race was real: the swapper kept flipping while the reads ran, and some reads lost it.
    expect(swaps).toBeGreaterThan(1000)
    expect(refused).toBeGreaterThan(0)
    expect(inside).toBeGreaterThan(0)
  })
})
