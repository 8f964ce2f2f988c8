// Spawning a stdio MCP server, apart from talking to it: the process can be started before the
// MCP SDK and the runtime are loaded (a CLI does so while it reads its own modules), and the
// transport that later speaks to it gets every event the process sent meanwhile, in order.
// Loads nothing but node:child_process, so spawning early costs no module loading.
import { type ChildProcess, spawn } from 'node:child_process'
import { processShared } from '../../util/process-shared.js'

/** What a stdio server is started from: the stdio form of a server spec. */
export interface StdioSpawnSpec {
  readonly command: string
  readonly args?: readonly string[]
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
}

/**
 * An `initialize` exchange already run with a spawned process, outside any transport: what was
 * sent and the server's answer (its JSON-RPC response or error, undefined when none came).
 */
export interface RawHandshake {
  readonly params: Readonly<Record<string, unknown>>
  readonly answer: Promise<Record<string, unknown> | undefined>
  /** Whether `notifications/initialized` was sent too (set before `answer` resolves). */
  initialized: boolean
}

/** What the transport hears from the process; each is called in the order the process sent them. */
export interface SpawnedStdioHandlers {
  spawn(): void
  error(error: Error): void
  close(): void
  data(chunk: Buffer): void
  stdinError(error: Error): void
  stdoutError(error: Error): void
}

/** One event, replayed on the handlers when they come. */
type Event = (handlers: SpawnedStdioHandlers) => void

/** The environment variables a spawned server inherits, as the MCP SDK's stdio transport chooses them. */
const INHERITED_ENV =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PROCESSOR_ARCHITECTURE',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'PROGRAMFILES',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const key of INHERITED_ENV) {
    const value = process.env[key]
    // A shell function exported in the environment is never passed on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value
  }
  return env
}

/**
 * A started server process whose events wait for their listener: until `attach`, what it sends
 * (spawned, failed, output, closed) is kept, and `attach` hands it all over in order.
 */
export class SpawnedStdio {
  readonly child: ChildProcess
  /** A handshake someone else already ran with the process, for the connection to adopt (see raw-handshake.ts). */
  handshake: RawHandshake | undefined
  private handlers: SpawnedStdioHandlers | undefined
  private queued: Event[] = []
  /** Whole lines go here first while something diverts them (see divert). */
  private diverter: ((chunk: Buffer) => void) | undefined

  constructor(spec: StdioSpawnSpec) {
    this.child = spawn(spec.command, spec.args ? [...spec.args] : [], {
      env: { ...inheritedEnv(), ...spec.env },
      stdio: ['pipe', 'pipe', 'inherit'],
      shell: false,
      windowsHide: process.platform === 'win32',
      cwd: spec.cwd,
    })
    this.child.on('error', (error) => this.emit((h) => h.error(error)))
    this.child.on('spawn', () => this.emit((h) => h.spawn()))
    this.child.on('close', () => this.emit((h) => h.close()))
    this.child.stdin?.on('error', (error) => this.emit((h) => h.stdinError(error)))
    this.child.stdout?.on('data', (chunk: Buffer) => {
      if (this.diverter !== undefined) this.diverter(chunk)
      else this.deliver(chunk)
    })
    this.child.stdout?.on('error', (error) => this.emit((h) => h.stdoutError(error)))
  }

  /** Start delivering: everything kept so far at once, then each event as it comes. Once only. */
  attach(handlers: SpawnedStdioHandlers): void {
    if (this.handlers !== undefined) throw new Error('this spawned server already has a transport')
    this.handlers = handlers
    const queued = this.queued
    this.queued = []
    for (const event of queued) event(handlers)
  }

  /**
   * Until the returned release is called, each whole line the process writes is offered to `take`
   * first: a line it takes is never delivered, any other is, in order and byte for byte (an
   * unfinished line waits for its end, and is delivered as it is at the release).
   */
  divert(take: (line: string) => boolean): () => void {
    let rest: Buffer | undefined
    /** Released (lines are no longer offered); while a chunk is being read, its end is delivered after it. */
    let released = false
    let reading = false
    const stop = () => {
      this.diverter = undefined
      if (rest !== undefined) this.deliver(rest)
      rest = undefined
    }
    this.diverter = (chunk) => {
      const buffer = rest === undefined ? chunk : Buffer.concat([rest, chunk])
      let at = 0
      let from = 0
      reading = true
      try {
        for (;;) {
          const newline = buffer.indexOf(0x0a, at)
          if (newline === -1) break
          const line = buffer.toString('utf8', at, newline)
          if (!released && take(line)) {
            if (at > from) this.deliver(buffer.subarray(from, at))
            from = newline + 1
          }
          at = newline + 1
        }
      } finally {
        reading = false
      }
      if (at > from) this.deliver(buffer.subarray(from, at))
      rest = at === buffer.length ? undefined : buffer.subarray(at)
      // Released by `take` itself: the unfinished end of this chunk (not the one before) goes on.
      if (released) stop()
    }
    return () => {
      if (released) return
      released = true
      if (!reading) stop()
    }
  }

  private deliver(chunk: Buffer): void {
    const handlers = this.handlers
    if (handlers !== undefined) handlers.data(chunk)
    else this.queued.push((h) => h.data(chunk))
  }

  private emit(event: Event): void {
    if (this.handlers === undefined) this.queued.push(event)
    else event(this.handlers)
  }
}

/**
 * Servers started ahead of their connection, by what they were started from. Kept on the global
 * object, not in this module: the CLI starts them from a small first script and connects from its
 * main bundle, each with its own copy of this module.
 */
const early = processShared('earlySpawns', () => new Map<string, SpawnedStdio[]>())

function keyOf(spec: StdioSpawnSpec): string {
  return JSON.stringify([spec.command, spec.args ?? [], spec.env ?? {}, spec.cwd ?? null])
}

/**
 * Start a stdio server now, for the first connection made later with an identical spec (command,
 * arguments, environment and working directory) to take over instead of spawning its own.
 * Undefined when it could not even be spawned (the connection then tries, and says why).
 */
export function spawnEarly(spec: StdioSpawnSpec): SpawnedStdio | undefined {
  let spawned: SpawnedStdio
  try {
    spawned = new SpawnedStdio(spec)
  } catch {
    // Left to the connection, which spawns it again and reports the failure in its own words.
    return undefined
  }
  const key = keyOf(spec)
  const list = early.get(key) ?? []
  list.push(spawned)
  early.set(key, list)
  return spawned
}

/**
 * Start every spec that has no process started early yet, so a second caller with the same specs
 * (the CLI's main bundle after its first script) starts none again. A spec listed n times gets n.
 */
export function spawnEarlyMissing(specs: readonly StdioSpawnSpec[]): void {
  const wanted = new Map<string, number>()
  for (const spec of specs) {
    const key = keyOf(spec)
    const count = (wanted.get(key) ?? 0) + 1
    wanted.set(key, count)
    if ((early.get(key)?.length ?? 0) < count) spawnEarly(spec)
  }
}

/** The server started early with this spec, taken (so only one connection gets it), or undefined. */
export function takeEarlySpawn(spec: StdioSpawnSpec): SpawnedStdio | undefined {
  const key = keyOf(spec)
  const list = early.get(key)
  const taken = list?.shift()
  if (list?.length === 0) early.delete(key)
  return taken
}

/**
 * The server started early for each of `specs`, left for their connections to take: for specs
 * alike, the first for the first of them, the second for the second, and so on.
 */
export function peekEarlySpawns(specs: readonly StdioSpawnSpec[]): (SpawnedStdio | undefined)[] {
  const seen = new Map<string, number>()
  return specs.map((spec) => {
    const key = keyOf(spec)
    const nth = seen.get(key) ?? 0
    seen.set(key, nth + 1)
    return early.get(key)?.[nth]
  })
}
/** Stop every server started early that no connection took (as a transport closes one: stdin ended, then killed). */
export function discardEarlySpawns(): void {
  for (const list of early.values())
    for (const { child } of list) {
      child.stdin?.end()
      if (child.exitCode === null) child.kill('SIGTERM')
    }
  early.clear()
}
