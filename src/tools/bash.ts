import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { constants as fsConstants, readdirSync, readFileSync } from 'node:fs'
import { access, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import type { ContentBlock } from '../contract/content.js'
import type { ToolRunContext } from '../contract/execution.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolResultView } from '../contract/views.js'
import { ConfigError } from '../errors/config-error.js'
import { defineTool, type ValueOfSchema } from '../schema/define-tool.js'
import { OutputProgress } from './output-progress.js'
import { bool, callPresenter, int, resultPresenter, str } from './present-util.js'
import { type BashSandboxMode, bubblewrapArgs, resolveSandbox, sandboxInitPid } from './sandbox.js'

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /** Working directory of every command. */
  cwd: string
  /** Cooperative timeout budget (default 120 000 ms). */
  timeoutMs?: number
  /** Combined stdout+stderr bytes kept (default 64 KiB): the first and last halves, with a marker between. */
  outputCapBytes?: number
  /** Delay between SIGTERM and SIGKILL to the process group (default 2000 ms). */
  killGraceMs?: number
  /**
   * Environment of the command, replacing the default minimal one (`PATH`, `HOME`, `LANG`, `LC_ALL`,
   * `USER`, `LOGNAME`, `SHELL`, `TERM=dumb`, `PWD`). The host's own environment (API keys, cloud
   * credentials) never reaches a command unless passed here or named in `inheritEnv`.
   */
  env?: Readonly<Record<string, string | undefined>>
  /** Host environment variables passed through by name, on top of the minimal environment or `env`. */
  inheritEnv?: readonly string[]
  /**
   * OS sandbox (default `'auto'`): `'bwrap'` runs every command under bubblewrap (the file system
   * read-only except `cwd` and a private `/tmp`, no network unless `network: true`, its own PID
   * namespace so everything it started dies with the call); `'auto'` uses bubblewrap when it works
   * here and otherwise runs unconfined; `'none'` always runs unconfined. `'bwrap'` throws at creation
   * when bubblewrap is missing or cannot create its namespaces.
   */
  sandbox?: BashSandboxMode
  /** Allow network access inside the sandbox (default false). Unconfined commands always have it. */
  network?: boolean
  /** Shell binary (default `bash`, found on PATH). */
  shell?: string
  /** Least time between two progress reports of the latest output lines (default 250 ms). */
  progressIntervalMs?: number
  /** Idle budget: the command times out after this long without output (under `TimeoutPolicy`; default none). */
  idleTimeoutMs?: number
}

/** Keeps the head and the tail of a byte stream within a cap, counting what falls between. */
class OutputCollector {
  private readonly half: number
  private readonly head: Buffer[] = []
  private headBytes = 0
  private readonly tail: Buffer[] = []
  private tailBytes = 0
  total = 0

  constructor(cap: number) {
    this.half = Math.max(1, Math.floor(cap / 2))
  }

  push(chunk: Buffer): void {
    this.total += chunk.length
    let rest = chunk
    if (this.headBytes < this.half) {
      const take = Math.min(this.half - this.headBytes, rest.length)
      this.head.push(rest.subarray(0, take))
      this.headBytes += take
      rest = rest.subarray(take)
    }
    if (rest.length === 0) return
    this.tail.push(rest)
    this.tailBytes += rest.length
    while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= this.half) {
      this.tailBytes -= this.tail.shift()!.length
    }
    if (this.tailBytes > this.half) {
      const drop = this.tailBytes - this.half
      this.tail[0] = this.tail[0].subarray(drop)
      this.tailBytes -= drop
    }
  }

  result(): { output: string; truncated: boolean } {
    const dropped = this.total - this.headBytes - this.tailBytes
    const head = Buffer.concat(this.head).toString('utf8')
    const tail = Buffer.concat(this.tail).toString('utf8')
    if (dropped === 0) return { output: Buffer.concat([...this.head, ...this.tail]).toString('utf8'), truncated: false }
    return { output: `${head}\n[… ${dropped} bytes of output truncated …]\n${tail}`, truncated: true }
  }
}

const TITLE_MAX = 120

function commandTitle(command: string): { title: string; shortened: boolean } {
  const firstLine = command.split('\n', 1)[0]
  const multiLine = firstLine.length !== command.length
  if (firstLine.length <= TITLE_MAX && !multiLine) return { title: command, shortened: false }
  return { title: `${firstLine.slice(0, TITLE_MAX)}…`, shortened: true }
}

const BASH_OUTPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    command: { type: 'string', required: true },
    cwd: { type: 'string', required: true },
    output: { type: 'string', required: true },
    exitCode: { oneOf: [{ type: 'integer' }, { type: 'null' }], required: true },
    signal: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
    truncated: { type: 'boolean', required: true },
    outputBytes: { type: 'integer', required: true },
    aborted: { type: 'boolean', required: true },
    sandbox: { type: 'string', enum: ['bwrap', 'none'], required: true },
  },
} as const

type BashValue = ValueOfSchema<typeof BASH_OUTPUT_SCHEMA>

/** The model's view: the output, then how the command ended. */
function renderBash(value: BashValue): ContentBlock[] {
  const status =
    value.signal !== null
      ? `${value.aborted ? 'Aborted; ' : ''}killed by ${value.signal}`
      : `Exit code: ${value.exitCode ?? 'unknown'}`
  const body = value.output === '' ? '(no output)' : value.output
  return [{ type: 'text', text: `${body}${body.endsWith('\n') ? '' : '\n'}\n${status}` }]
}

function bashResultView(args: { command: string }, meta: Record<string, unknown>): ToolResultView | undefined {
  const output = str(meta, 'output')
  if (output === undefined || bool(meta, 'truncated') === undefined) return undefined
  const view: ToolResultView = { card: 'terminal', title: commandTitle(args.command).title, output }
  const exitCode = int(meta, 'exitCode')
  const signal = str(meta, 'signal')
  if (exitCode !== undefined) view.exitCode = exitCode
  if (signal !== undefined) view.signal = signal
  const sandbox = str(meta, 'sandbox')
  if (sandbox !== undefined) view.sandbox = sandbox
  return view
}

/** Everything one command runs with, settled when the tool was created and when the call started. */
interface CommandSpec {
  command: string
  /** The working directory as configured (what the result reports). */
  configuredCwd: string
  /** Its real path (where the command runs). */
  cwd: string
  env: Record<string, string>
  shell: string
  sandbox: 'bwrap' | 'none'
  network: boolean
  cap: number
  grace: number
  progressIntervalMs: number
}

/** The real path of the working directory, checked at call time (it may have gone since creation). */
async function workingDirectory(configuredCwd: string): Promise<string> {
  let cwd: string
  try {
    cwd = await realpath(configuredCwd)
  } catch (error) {
    throw new Error(`bash: working directory ${configuredCwd} is not accessible: ${(error as Error).message}`)
  }
  if (!(await stat(cwd)).isDirectory()) throw new Error(`bash: working directory ${configuredCwd} is not a directory`)
  return cwd
}

/**
 * One command from spawn to settlement. It settles (once) only when the shell has exited, its
 * output pipes have closed and nothing it started is left in its process group (quiescence);
 * abort terminates the group and the result says `aborted`.
 */
class CommandRun {
  private readonly child: ChildProcessByStdio<null, Readable, Readable>
  private readonly infoStream: Readable | null | undefined
  private readonly collector: OutputCollector
  private readonly progress: OutputProgress
  private readonly timers: NodeJS.Timeout[] = []
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  private openStreams = 2
  private info = ''
  private aborted = false
  private settled = false
  private escalated = false
  private groupDone = false

  constructor(
    private readonly spec: CommandSpec,
    private readonly exec: ToolRunContext,
    private readonly resolve: (value: BashValue) => void,
    private readonly reject: (error: Error) => void,
  ) {
    const [file, argv] =
      spec.sandbox === 'bwrap'
        ? ['bwrap', bubblewrapArgs(spec.cwd, spec.network, spec.shell, spec.command, 3)]
        : [spec.shell, ['-c', spec.command]]
    this.child = spawn(file, argv, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      // Under bubblewrap, fd 3 carries its `--info-fd` report (the sandbox init's pid).
      stdio: ['ignore', 'pipe', 'pipe', spec.sandbox === 'bwrap' ? 'pipe' : 'ignore'],
    }) as ChildProcessByStdio<null, Readable, Readable>
    this.infoStream = this.child.stdio[3] as Readable | null | undefined
    this.collector = new OutputCollector(spec.cap)
    this.progress = new OutputProgress((p) => exec.progress(p), spec.progressIntervalMs)
    this.collectOutput()
    this.child.on('error', (error) => this.onSpawnError(error))
    this.child.on('exit', (code, signal) => this.onExit(code, signal))
    if (exec.signal.aborted) this.onAbort()
    else exec.signal.addEventListener('abort', this.onAbort, { once: true })
  }

  private collectOutput(): void {
    const onData = (chunk: Buffer): void => {
      this.collector.push(chunk)
      this.progress.push(chunk)
    }
    const streamClosed = (): void => {
      this.openStreams--
      this.finish()
    }
    this.child.stdout.on('data', onData)
    this.child.stderr.on('data', onData)
    this.child.stdout.on('close', streamClosed)
    this.child.stderr.on('close', streamClosed)
    if (this.infoStream) {
      this.openStreams++
      this.infoStream.setEncoding('utf8')
      this.infoStream.on('data', (chunk: string) => {
        if (this.info.length < 4096) this.info += chunk
      })
      this.infoStream.on('close', streamClosed)
    }
  }

  private readonly onAbort = (): void => {
    this.aborted = true
    this.terminateGroup()
  }

  private onSpawnError(error: Error): void {
    if (this.child.pid !== undefined || this.settled) return
    this.cleanup()
    this.reject(new Error(`bash: failed to start ${this.spec.shell}: ${error.message}`))
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exit = { code, signal }
    this.awaitGroup()
    if (this.openStreams > 0) {
      // A process that escaped the group (setsid) may keep the pipes open forever.
      const closePipes = (): void => {
        this.child.stdout.destroy()
        this.child.stderr.destroy()
        this.infoStream?.destroy()
      }
      this.timers.push(setTimeout(closePipes, this.spec.grace * 2 + 100))
    }
    this.finish()
  }

  private killGroup(sig: NodeJS.Signals): void {
    if (this.child.pid === undefined) return
    try {
      process.kill(-this.child.pid, sig)
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  /** SIGTERM to the group now, SIGKILL after the grace (scheduled once). */
  private terminateGroup(): void {
    this.killGroup('SIGTERM')
    if (this.escalated) return
    this.escalated = true
    this.timers.push(setTimeout(() => this.killGroup('SIGKILL'), this.spec.grace))
  }

  /**
   * Sandboxed, the group is bubblewrap and its PID namespace: while the namespace's init runs the
   * group is alive, and once it has exited the kernel has killed and reaped everything inside. One
   * read of the init's state answers, without scanning /proc (where its zombie may linger until
   * the host's init reaps it), so it can also be polled at a short interval.
   */
  private sandboxInit(): number | undefined {
    return this.spec.sandbox === 'bwrap' ? sandboxInitPid(this.info) : undefined
  }

  private groupAlive(): boolean {
    if (this.child.pid === undefined) return false
    const init = this.sandboxInit()
    return init !== undefined ? processRuns(init) : groupHasLiveMembers(this.child.pid)
  }

  /** Quiescence: once the shell has exited, terminate what is left in its group and wait until it is gone. */
  private awaitGroup(): void {
    if (!this.groupAlive()) {
      this.groupDone = true
      return
    }
    // SIGTERM now, SIGKILL after the grace — even when the leftovers already closed the pipes.
    this.terminateGroup()
    const started = performance.now()
    const interval = this.sandboxInit() !== undefined ? 2 : 25
    const poll = (): void => {
      // Past the SIGKILL, what still answers is a zombie awaiting its reaper: it runs no more.
      if (!this.groupAlive() || performance.now() - started > this.spec.grace + 200) {
        this.groupDone = true
        this.finish()
      } else this.timers.push(setTimeout(poll, interval))
    }
    this.timers.push(setTimeout(poll, interval))
  }

  private cleanup(): void {
    this.settled = true
    this.progress.close()
    for (const t of this.timers) clearTimeout(t)
    this.exec.signal.removeEventListener('abort', this.onAbort)
  }

  private finish(): void {
    if (this.settled || this.exit === undefined || this.openStreams > 0 || !this.groupDone) return
    this.cleanup()
    const { output, truncated } = this.collector.result()
    this.resolve({
      command: this.spec.command,
      cwd: this.spec.configuredCwd,
      output,
      exitCode: this.exit.code,
      signal: this.exit.signal,
      truncated,
      outputBytes: this.collector.total,
      aborted: this.aborted,
      sandbox: this.spec.sandbox,
    })
  }
}

/**
 * `bash { command }`: run a command with `bash -c` in its own process group (`detached`). Abort
 * (cancellation or the timeout policy) sends SIGTERM to the whole group, then SIGKILL after
 * `killGraceMs`. When the shell exits, whatever it left running in its group is terminated the same
 * way, so the call only settles once the work it started is gone (quiescence) — background jobs do
 * not outlive the call. A non-zero exit is a normal result (the model reads the exit code); an
 * aborted run resolves with `aborted: true` so the pipeline can report the cancellation.
 */
export function createBashToolDefinition(options: BashToolOptions): ToolDefinition {
  const configuredCwd = path.resolve(options.cwd)
  const cap = options.outputCapBytes ?? 64 * 1024
  const grace = options.killGraceMs ?? 2000
  const shell = options.shell ?? 'bash'
  const timeoutMs = options.timeoutMs ?? 120_000
  const progressIntervalMs = options.progressIntervalMs ?? 250
  if (!Number.isFinite(progressIntervalMs) || progressIntervalMs < 0)
    throw new ConfigError('createBashTool(options).progressIntervalMs', 'expected a non-negative number')
  if (!Number.isSafeInteger(cap) || cap <= 0)
    throw new ConfigError('createBashTool(options).outputCapBytes', 'expected a positive integer')
  if (!Number.isFinite(grace) || grace < 0)
    throw new ConfigError('createBashTool(options).killGraceMs', 'expected a non-negative number')
  const mode = options.sandbox ?? 'auto'
  if (mode !== 'auto' && mode !== 'bwrap' && mode !== 'none')
    throw new ConfigError(
      'createBashTool(options).sandbox',
      `expected 'auto', 'bwrap' or 'none', got ${JSON.stringify(mode)}`,
    )
  const network = options.network === true
  const sandbox = resolveSandbox(mode, 'bwrap')
  const baseEnv = commandEnv(options, configuredCwd, shell)
  return defineTool({
    name: 'bash',
    description:
      `Run a shell command with bash -c in ${configuredCwd} and return its combined stdout and stderr and exit code. ` +
      `Output beyond ${cap} bytes is cut in the middle. Commands must not wait for input; background processes are ` +
      `terminated when the command finishes. ${sandboxSentence(sandbox, network, configuredCwd)}`,
    parameters: {
      command: { type: 'string', required: true, description: 'The bash command line to run.' },
    },
    output: {
      schema: BASH_OUTPUT_SCHEMA,
      render: (_args, value) => renderBash(value),
      presentationMeta(_args, value) {
        const { output, exitCode, signal, truncated, aborted, sandbox } = value
        return { output, exitCode, signal, truncated, aborted, sandbox }
      },
    },
    async execute(args, exec) {
      const cwd = await workingDirectory(configuredCwd)
      exec.signal.throwIfAborted()
      const env = { ...baseEnv, PWD: cwd }
      await checkShellRuns(shell, env, cwd, sandbox)
      const spec = {
        command: args.command,
        configuredCwd,
        cwd,
        env,
        shell,
        sandbox,
        network,
        cap,
        grace,
        progressIntervalMs,
      }
      return await new Promise<BashValue>((resolve, reject) => {
        new CommandRun(spec, exec, resolve, reject)
      })
    },
    timeoutMs,
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    presentCall: callPresenter('bash', (args) => {
      const { title, shortened } = commandTitle(args.command)
      return shortened
        ? { card: 'terminal', title, description: args.command, cwd: configuredCwd }
        : { card: 'terminal', title, cwd: configuredCwd }
    }),
    presentResult: resultPresenter('bash', bashResultView),
  })
}

/** The model-facing statement of what confines a command (and what does not). */
function sandboxSentence(sandbox: 'bwrap' | 'none', network: boolean, cwd: string): string {
  if (sandbox === 'bwrap') {
    return (
      `Commands run in a bubblewrap sandbox: the file system is read-only except ${cwd} and a private /tmp, ` +
      `${network ? 'the network is available' : 'there is no network'}, and every process a command starts ends with it.`
    )
  }
  return (
    'Commands run unconfined, with the permissions of the host user (no OS sandbox): they can read and write ' +
    'anywhere that user can and use the network. A process that leaves the process group (setsid) can outlive the call.'
  )
}

const MINIMAL_ENV_NAMES = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'USER', 'LOGNAME'] as const
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** The environment of every command: minimal by default, `env` when given, plus `inheritEnv`. */
function commandEnv(options: BashToolOptions, cwd: string, shell: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (options.env !== undefined) {
    for (const [key, value] of Object.entries(options.env)) if (typeof value === 'string') out[key] = value
  } else {
    for (const name of MINIMAL_ENV_NAMES) {
      const value = process.env[name]
      if (value !== undefined) out[name] = value
    }
    out.PATH ??= DEFAULT_PATH
    out.LANG ??= 'C.UTF-8'
    out.SHELL = shell
    out.TERM = 'dumb'
    out.PWD = cwd
  }
  const inherit = options.inheritEnv ?? []
  if (!Array.isArray(inherit))
    throw new ConfigError('createBashTool(options).inheritEnv', 'expected an array of variable names')
  for (const name of inherit) {
    if (typeof name !== 'string')
      throw new ConfigError('createBashTool(options).inheritEnv', 'expected an array of variable names')
    const value = process.env[name]
    if (value !== undefined) out[name] = value
  }
  return out
}

/**
 * Fail the call clearly when the shell cannot be started, looked up as `execvp` does (the command's
 * PATH for a bare name). Unconfined, spawning a missing binary fails on its own; under bubblewrap
 * the sandbox starts fine and only its exec fails, which would read as an ordinary command exiting
 * with status 1 — so the same check runs in both modes and gives both one message. A shell below
 * /tmp (outside the workspace) is refused when sandboxed: the sandbox mounts a private /tmp over it.
 */
async function checkShellRuns(
  shell: string,
  env: Readonly<Record<string, string>>,
  cwd: string,
  sandbox: 'bwrap' | 'none',
): Promise<void> {
  const named = shell.includes('/')
  const candidates = named
    ? [path.resolve(cwd, shell)]
    : (env.PATH ?? DEFAULT_PATH).split(':').map((dir) => path.resolve(cwd, dir, shell))
  for (const candidate of candidates) {
    let real: string
    try {
      await access(candidate, fsConstants.X_OK)
      real = await realpath(candidate)
      if (!(await stat(real)).isFile()) continue
    } catch {
      continue
    }
    const underTmp = real === '/tmp' || real.startsWith('/tmp/')
    if (sandbox === 'bwrap' && underTmp && !real.startsWith(`${cwd}/`)) {
      throw new Error(
        `bash: failed to start ${shell}: ${real} lies under /tmp, which the sandbox replaces with a private /tmp`,
      )
    }
    return
  }
  throw new Error(`bash: failed to start ${shell}: no such executable${named ? '' : ' on PATH'}`)
}

/** Whether process `pid` exists and is not a zombie (Linux `/proc`; elsewhere: whether it exists). */
function processRuns(pid: number): boolean {
  if (process.platform !== 'linux') {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false
  }
  const state = stat.charAt(stat.lastIndexOf(')') + 2)
  return state !== 'Z' && state !== 'X'
}

/**
 * Whether a process group still has a member that runs. `kill(-pgid, 0)` also answers for zombies
 * (a sandbox's exited init, children whose reaper is slow), so on Linux the answer is confirmed
 * from `/proc`: only members not in state Z/X count. Called only once the shell has exited.
 */
function groupHasLiveMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (process.platform !== 'linux') return true
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    // Fields after the parenthesised command: state, ppid, pgrp, …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true
  }
  return false
}
