// Issue 22: a refused or budget-killed run leaks nothing in QuickJS, and no QuickJS or emscripten
// text reaches the host's stderr, on either runtime. Each runtime runs in its own child process so
// the test sees exactly what the host process would print.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { RUNTIME_KINDS } from './runtimes.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const child = fileURLToPath(new URL('./engine-output-child.ts', import.meta.url))

interface ChildRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

function runChild(kind: string, env: NodeJS.ProcessEnv = {}): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, kind], {
      cwd: root,
      env: { ...process.env, NODE_DEBUG: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text
    })
    proc.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text
    })
    proc.once('error', reject)
    proc.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe.each(RUNTIME_KINDS)('engine output (%s runtime)', (kind) => {
  it('R-CODE-2 refused and budget-killed runs print nothing on the host stderr and free every QuickJS runtime', async () => {
    const run = await runChild(kind)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { name?: string; reason?: string; stats?: Record<string, number> })
    const reasons = Object.fromEntries(lines.filter((line) => line.name !== undefined).map((l) => [l.name, l.reason]))
    expect(reasons).toEqual({
      oversized: 'result-too-large',
      oversizedAfterAwait: 'result-too-large',
      oversizedThrow: 'thrown',
      largeInJob: undefined,
      cpu: 'cpu-limit',
      memoryInJob: 'memory-limit',
      calls: 'call-limit',
    })
    // Every QuickJS runtime was freed cleanly: none was abandoned to a failed leak check (which, in
    // a worker, retires the worker and starts a replacement).
    const stats = lines.find((line) => line.stats !== undefined)?.stats
    if (kind === 'inline') expect(stats).toMatchObject({ created: 7, disposed: 7, abandoned: 0 })
    else expect(stats && stats.started - stats.terminated - stats.crashed).toBe(1)
  }, 180_000)
})
