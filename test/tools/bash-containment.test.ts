// #11: the bash tool's environment, OS sandbox and process discipline.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { homedir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createBashTool } from '../../src/tools/index.js'
import { probeBubblewrap, resolveSandbox } from '../../src/tools/sandbox.js'
import { runTool, tempDir } from './helpers.js'

type BashValue = { output: string; exitCode: number | null; sandbox: string; aborted: boolean }

let ws: { dir: string; cleanup(): Promise<void> }
beforeEach(async () => {
  ws = await tempDir('bash11')
})
afterEach(async () => {
  await ws.cleanup()
})

async function run(options: Parameters<typeof createBashTool>[0], command: string): Promise<BashValue> {
  return (await runTool(createBashTool(options), { command })).value as BashValue
}

/** Bytes of a heartbeat file now, and again after a pause: equal when its writer is gone. */
async function stillBeating(file: string): Promise<boolean> {
  const size = () => (existsSync(file) ? statSync(file).size : 0)
  const before = size()
  await new Promise((r) => setTimeout(r, 600))
  return size() !== before
}

describe('#11 bash environment', () => {
  const canary = 'TOOLGATE_CANARY_SECRET'
  beforeAll(() => {
    process.env[canary] = 'hunter2-canary'
  })
  afterAll(() => {
    delete process.env[canary]
  })

  it.each(['none', 'auto'] as const)('sandbox %s: the host secret is unreadable by default', async (sandbox) => {
    const value = await run({ cwd: ws.dir, sandbox }, `echo "[$${canary}]"; env`)
    expect(value.output.startsWith('[]\n')).toBe(true)
    expect(value.output).not.toContain('hunter2-canary')
    expect(value.output).toMatch(/^PATH=/m)
    expect(value.output).toMatch(/^TERM=dumb$/m)
    expect(value.output).toContain(`PWD=${ws.dir}`)
  })

  it('inheritEnv passes chosen variables through; env replaces the minimal environment', async () => {
    const inherited = await run({ cwd: ws.dir, sandbox: 'none', inheritEnv: [canary] }, `echo "[$${canary}]"`)
    expect(inherited.output).toBe('[hunter2-canary]\n')
    const replaced = await run(
      { cwd: ws.dir, sandbox: 'none', env: { PATH: process.env.PATH, ONLY: 'this' } },
      `echo "[$ONLY][$${canary}][$HOME]"`,
    )
    expect(replaced.output).toBe('[this][][]\n')
  })
})

describe('#11 unsandboxed process discipline', () => {
  it('a background child that ignores SIGTERM and redirected its output is gone after the call', async () => {
    const beat = path.join(ws.dir, 'heartbeat')
    const value = await run(
      { cwd: ws.dir, sandbox: 'none', killGraceMs: 200 },
      `(trap '' TERM; while :; do echo x >> ${beat}; sleep 0.05; done) >/dev/null 2>&1 & echo started`,
    )
    expect(value.output).toBe('started\n')
    expect(value.sandbox).toBe('none')
    expect(await stillBeating(beat)).toBe(false)
  })

  it('says in its description that it is unconfined and what it cannot contain', () => {
    const tool = createBashTool({ cwd: ws.dir, sandbox: 'none' })
    expect(tool.description).toMatch(/unconfined/)
    expect(tool.description).toMatch(/setsid/)
  })
})

describe('#11 sandbox selection', () => {
  it("'bwrap' fails clearly when bubblewrap is missing; 'auto' then runs unconfined", () => {
    const missing = '/nonexistent/bwrap'
    expect(probeBubblewrap(missing)).toMatch(/not installed/)
    expect(() => resolveSandbox('bwrap', missing)).toThrow(
      /sandbox: 'bwrap'.*not installed.*apt-get install bubblewrap/,
    )
    expect(resolveSandbox('auto', missing)).toBe('none')
    expect(resolveSandbox('none', missing)).toBe('none')
  })

  it('refuses an unknown sandbox mode', () => {
    expect(() => createBashTool({ cwd: ws.dir, sandbox: 'docker' as never })).toThrow(/sandbox: expected/)
  })
})

/**
 * A fresh host directory that the sandbox shows read-only: not under /tmp, /dev or /proc (the
 * sandbox mounts its own there, so a path below them proves nothing), whatever the checkout's
 * location — a clone under /tmp included (issue 22).
 */
function hostDirSeenBySandbox(): string {
  const hidden = ['/tmp', '/dev', '/proc']
  for (const base of ['/var/tmp', path.join(homedir(), '.cache'), homedir()]) {
    try {
      const real = realpathSync(base)
      if (hidden.some((h) => real === h || real.startsWith(`${h}/`))) continue
      return mkdtempSync(path.join(real, 'toolgate-outside-'))
    } catch {
      // Missing or not writable: try the next base.
    }
  }
  throw new Error('no writable directory outside /tmp for the sandbox containment test')
}

// CI installs bubblewrap (.ci/run); the sandbox tests need it to work on this machine.
describe('#11 bubblewrap sandbox', () => {
  let outside: string
  let server: Server
  let port = 0
  beforeAll(async () => {
    expect(probeBubblewrap('bwrap')).toBeUndefined()
    outside = hostDirSeenBySandbox()
    server = createServer((socket) => socket.end('pong\n'))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  })
  afterAll(async () => {
    rmSync(outside, { recursive: true, force: true })
    await new Promise((r) => server.close(r))
  })

  it('says which ran, in the description and the result', async () => {
    const tool = createBashTool({ cwd: ws.dir, sandbox: 'bwrap' })
    expect(tool.description).toMatch(/bubblewrap sandbox/)
    expect(tool.description).toMatch(/no network/)
    const value = await run({ cwd: ws.dir, sandbox: 'bwrap' }, 'echo hi > inside.txt; cat inside.txt')
    expect(value).toMatchObject({ output: 'hi\n', exitCode: 0, sandbox: 'bwrap' })
    expect(readFileSync(path.join(ws.dir, 'inside.txt'), 'utf8')).toBe('hi\n')
  })

  it('refuses writes outside the workspace; /tmp is private', async () => {
    const target = path.join(outside, 'escaped.txt')
    const value = await run(
      { cwd: ws.dir, sandbox: 'bwrap' },
      `echo x > ${target}; echo "rc=$?"; echo y > /tmp/private.txt && cat /tmp/private.txt`,
    )
    expect(value.output).toMatch(/Read-only file system/)
    expect(value.output).toContain('rc=1')
    expect(value.output).toContain('y\n')
    expect(existsSync(target)).toBe(false)
    expect(existsSync('/tmp/private.txt')).toBe(false)
  })

  it('has no network unless network: true', async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo refused`
    const off = await run({ cwd: ws.dir, sandbox: 'bwrap' }, probe)
    expect(off.output).toMatch(/refused/)
    expect(off.output).not.toContain('pong')
    const on = await run({ cwd: ws.dir, sandbox: 'bwrap', network: true }, probe)
    expect(on.output).toBe('pong\n')
  })

  it('setsid and SIGTERM-ignoring background children are gone after the call', async () => {
    const setsidBeat = path.join(ws.dir, 'setsid-beat')
    const stubbornBeat = path.join(ws.dir, 'stubborn-beat')
    const value = await run(
      { cwd: ws.dir, sandbox: 'bwrap', killGraceMs: 200 },
      `setsid sh -c 'while :; do echo x >> ${setsidBeat}; sleep 0.05; done' >/dev/null 2>&1 < /dev/null &
       (trap '' TERM; while :; do echo x >> ${stubbornBeat}; sleep 0.05; done) >/dev/null 2>&1 &
       sleep 0.3; echo started`,
    )
    expect(value.output).toBe('started\n')
    await vi.waitFor(() => expect(existsSync(setsidBeat) && existsSync(stubbornBeat)).toBe(true))
    const [a, b] = await Promise.all([stillBeating(setsidBeat), stillBeating(stubbornBeat)])
    expect(a).toBe(false)
    expect(b).toBe(false)
  })
})

describe('issue 22: a shell that cannot run is a clear error, sandboxed or not', () => {
  it.each(['none', 'bwrap'] as const)('sandbox %s: a missing shell path rejects the call', async (sandbox) => {
    const tool = createBashTool({ cwd: ws.dir, sandbox, shell: '/nonexistent/bash' })
    await expect(runTool(tool, { command: 'echo hi' })).rejects.toThrow(
      /^bash: failed to start \/nonexistent\/bash: no such executable$/,
    )
  })

  it.each(['none', 'bwrap'] as const)('sandbox %s: a shell name not on PATH rejects the call', async (sandbox) => {
    const tool = createBashTool({ cwd: ws.dir, sandbox, shell: 'no-such-shell-toolgate' })
    await expect(runTool(tool, { command: 'echo hi' })).rejects.toThrow(
      /^bash: failed to start no-such-shell-toolgate: no such executable on PATH$/,
    )
  })

  it('sandboxed, a shell under /tmp outside the workspace is refused: the sandbox hides it', async () => {
    const elsewhere = mkdtempSync('/tmp/toolgate-shell-')
    try {
      const shell = path.join(elsewhere, 'sh')
      writeFileSync(shell, '#!/bin/sh\nexec /bin/sh "$@"\n', { mode: 0o755 })
      const tool = createBashTool({ cwd: ws.dir, sandbox: 'bwrap', shell })
      await expect(runTool(tool, { command: 'echo hi' })).rejects.toThrow(/private \/tmp/)
      // Unconfined, the same shell runs.
      const value = await run({ cwd: ws.dir, sandbox: 'none', shell }, 'echo hi')
      expect(value.output).toBe('hi\n')
    } finally {
      rmSync(elsewhere, { recursive: true, force: true })
    }
  })
})
