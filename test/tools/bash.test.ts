import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createBashTool } from '../../src/tools/index.js'
import { fakeRunContext, runTool, tempDir, textOf } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }
let bash: ToolDefinition

/** Gone, or a zombie nobody has reaped yet (it no longer runs). */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state === 'Z' || state === 'X'
  } catch {
    return true
  }
}

async function waitForPid(file: string): Promise<number> {
  await vi.waitFor(
    () => {
      if (!existsSync(file) || readFileSync(file, 'utf8').trim() === '') throw new Error('pid not written yet')
    },
    { timeout: 10_000, interval: 20 },
  )
  return Number(readFileSync(file, 'utf8').trim())
}

beforeEach(async () => {
  ws = await tempDir('bash')
  // Unconfined: these tests follow host pids (bash-containment.test.ts covers the sandbox).
  bash = createBashTool({ cwd: ws.dir, killGraceMs: 300, sandbox: 'none' })
})

afterEach(async () => {
  await ws.cleanup()
})

describe('R-VIEW bash → terminal cards (issue 7)', () => {
  it('runs bash -c in cwd and presents call and result terminal cards', async () => {
    const args = { command: 'echo hello; pwd' }
    const { value, result } = await runTool(bash, args)
    expect(value).toEqual({
      command: 'echo hello; pwd',
      cwd: ws.dir,
      output: `hello\n${ws.dir}\n`,
      exitCode: 0,
      signal: null,
      truncated: false,
      outputBytes: 6 + ws.dir.length + 1,
      aborted: false,
      sandbox: 'none',
    })
    expect(textOf(result)).toBe(`hello\n${ws.dir}\n\nExit code: 0`)
    expect(bash.presentCall?.(args)).toEqual({ card: 'terminal', title: 'echo hello; pwd', cwd: ws.dir })
    expect(bash.presentResult?.(args, result)).toEqual({
      card: 'terminal',
      title: 'echo hello; pwd',
      output: `hello\n${ws.dir}\n`,
      exitCode: 0,
      // Which sandbox ran the command reaches the card (the viewer's badge).
      sandbox: 'none',
    })
  })

  it('a failing command is a normal result with its exit code and stderr', async () => {
    const args = { command: 'echo out; echo err >&2; exit 3' }
    const { value, result } = await runTool(bash, args)
    expect(value).toMatchObject({ exitCode: 3, signal: null, aborted: false })
    expect((value as { output: string }).output).toContain('err\n')
    expect(textOf(result)).toMatch(/Exit code: 3$/)
    expect(bash.presentResult?.(args, result)).toMatchObject({ card: 'terminal', exitCode: 3 })
  })

  it('a long or multi-line command gets a short title and the full command as description', () => {
    const command = `echo one\n${'echo two; '.repeat(30)}`
    expect(bash.presentCall?.({ command })).toEqual({
      card: 'terminal',
      title: 'echo one…',
      description: command,
      cwd: ws.dir,
    })
  })

  it('is exclusive, with a default timeout and exact parameters', () => {
    expect(bash.name).toBe('bash')
    expect(bash.isConcurrencySafe?.({ command: 'ls' }) ?? false).toBe(false)
    expect(bash.timeoutMs).toBe(120_000)
    expect(createBashTool({ cwd: ws.dir, timeoutMs: 5000 }).timeoutMs).toBe(5000)
    expect(Object.keys((bash.parameters as { properties: object }).properties)).toEqual(['command'])
  })

  it('caps an output flood, keeps head and tail, and says it truncated', async () => {
    const capped = createBashTool({ cwd: ws.dir, outputCapBytes: 1000 })
    const args = { command: "echo START; head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END" }
    const { value, result } = await runTool(capped, args)
    const v = value as { output: string; truncated: boolean; outputBytes: number; exitCode: number }
    expect(v.exitCode).toBe(0)
    expect(v.truncated).toBe(true)
    expect(v.outputBytes).toBe(6 + 3_000_000 + 1 + 4)
    expect(v.output.startsWith('START\n')).toBe(true)
    expect(v.output.endsWith('\nEND\n')).toBe(true)
    expect(v.output).toContain(`[… ${v.outputBytes - 1000} bytes of output truncated …]`)
    expect(v.output.length).toBeLessThan(1100)
    expect(bash.presentResult?.(args, result)).toMatchObject({ card: 'terminal', output: v.output })
  })

  it('abort kills the whole process group, including a child sleep, and settles after it is gone', async () => {
    const pidFile = path.join(ws.dir, 'child.pid')
    const controller = new AbortController()
    const args = { command: `sleep 1000 & echo $! > ${pidFile}; wait` }
    const running = bash.execute(args, fakeRunContext('bash', args, controller))
    const pid = await waitForPid(pidFile)
    expect(processGone(pid)).toBe(false)
    controller.abort()
    const value = await running
    expect(value).toMatchObject({ aborted: true, signal: 'SIGTERM', exitCode: null })
    await vi.waitFor(() => expect(processGone(pid)).toBe(true), { timeout: 5000, interval: 20 })
  })

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const pidFile = path.join(ws.dir, 'stubborn.pid')
    const controller = new AbortController()
    const args = { command: `trap '' TERM; sleep 1000 & echo $! > ${pidFile}; wait; wait` }
    const running = bash.execute(args, fakeRunContext('bash', args, controller))
    const pid = await waitForPid(pidFile)
    controller.abort()
    const value = await running
    expect(value).toMatchObject({ aborted: true, signal: 'SIGKILL' })
    await vi.waitFor(() => expect(processGone(pid)).toBe(true), { timeout: 5000, interval: 20 })
  })

  it('background processes left behind do not outlive the call', async () => {
    const pidFile = path.join(ws.dir, 'bg.pid')
    const args = { command: `sleep 1000 & echo $! > ${pidFile}; echo started` }
    const { value } = await runTool(bash, args)
    expect(value).toMatchObject({ exitCode: 0, output: 'started\n', aborted: false })
    const pid = Number(readFileSync(pidFile, 'utf8').trim())
    await vi.waitFor(() => expect(processGone(pid)).toBe(true), { timeout: 5000, interval: 20 })
  })

  it('fails clearly when the working directory is missing', async () => {
    const broken = createBashTool({ cwd: path.join(ws.dir, 'nope') })
    const args = { command: 'true' }
    await expect(broken.execute(args, fakeRunContext('bash', args))).rejects.toThrow(
      /bash: working directory .*nope is not accessible/,
    )
  })
})
