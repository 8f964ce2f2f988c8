// The official MCP conformance suite (@modelcontextprotocol/conformance) driven from vitest: its CLI
// needs Node 22 (the `node22` devDependency), its results are read from the JSON checks it writes
// with `--output-dir`, and the servers it measures are the project's own reference server
// (test/fixtures/conformance-server), run from this checkout, and server-everything
// (everything-server.ts).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { beforeAll } from 'vitest'

export const REPO = path.resolve(import.meta.dirname, '../..')
export const NODE22 = path.join(REPO, 'node_modules/node22/bin/node')
export const SUITE = path.join(REPO, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
export const REFERENCE_SERVER = path.join(REPO, 'test/fixtures/conformance-server/server.ts')

/** The protocol revisions the suite has frozen requirement sets for (`--requirements`). */
export type Revision = '2025-11-25' | '2026-07-28'

/** One check the suite reports (its `checks.json` rows). */
export interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string
  errorMessage?: string
  details?: Record<string, unknown>
}

/**
 * The scenarios of one kind that a revision requires (`conformance list --requirements`): the
 * section headed "Server scenarios" or "Client scenarios", not the ones it runs but never scores.
 */
export function requiredScenarios(kind: 'server' | 'client', revision: Revision): string[] {
  const out = execFileSync(NODE22, [SUITE, 'list', `--${kind}`, '--requirements', revision], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  const heading = kind === 'server' ? 'Server scenarios' : 'Client scenarios'
  const section = out.split(/\n\s*\n/).find((block) => block.trimStart().startsWith(heading))
  const names = [...(section ?? '').matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1])
  if (names.length === 0)
    throw new Error(`conformance list --${kind} --requirements ${revision} named no scenario:\n${out}`)
  return names
}

export interface Running {
  url: string
  output: () => string
  stop: () => Promise<void>
}

/** A port that was free a moment ago (the reference server and server-everything take theirs from $PORT). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  return exited
}

/** Spawn and wait for `ready` to match its output; rejects with the output if it exits first. */
export function startProcess(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string },
  ready: RegExp,
  what: string,
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${what} did not start within 120 s:\n${output}`))
    }, 120_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = ready.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve({ child, match, output: () => output })
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${what} exited (${code ?? signal}) before it was ready:\n${output}`))
    })
  })
}

/**
 * Start the reference server: $TOOLGATE_CONFORMANCE_SERVER names another server file to measure
 * instead (it must take $PORT and print the same ready line).
 */
export async function startReferenceServer(): Promise<Running> {
  const given = process.env.TOOLGATE_CONFORMANCE_SERVER
  const file = given ? path.resolve(given) : REFERENCE_SERVER
  if (!existsSync(file)) throw new Error(`the conformance reference server ${file} does not exist`)
  let lastError: unknown
  // The port is picked free just before; another process may take it in between, so try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    try {
      const { child, output } = await startProcess(
        process.execPath,
        ['--import', 'tsx', file],
        { cwd: REPO, env: { ...process.env, PORT: String(port) } },
        /MCP endpoint: http:\/\/localhost:\d+\/mcp/,
        'the conformance reference server',
      )
      return { url: `http://localhost:${port}/mcp`, output, stop: () => stopChild(child) }
    } catch (error) {
      lastError = error
    }
  }
  throw lastError
}

/** `toolgate serve --http 0 ...args` from the built CLI; its port is read from its log. */
export async function startToolgate(args: string[]): Promise<Running> {
  const { child, match, output } = await startProcess(
    process.execPath,
    [path.join(REPO, 'dist/cli/bin.js'), 'serve', '--http', '0', ...args],
    {},
    /serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    'toolgate serve',
  )
  return { url: match[1], output, stop: () => stopChild(child) }
}

export interface SuiteRun {
  /** Each scenario's checks, by scenario name; a scenario with no results is missing. */
  results: Map<string, Check[]>
  /** What the suite printed, for failure messages. */
  log: string
}

/** Run the suite's CLI with `args` plus `--output-dir`, bounded, and read back every checks.json. */
export async function runSuite(args: string[], timeoutMs = 240_000): Promise<SuiteRun> {
  const out = await mkdtemp(path.join(tmpdir(), 'toolgate-conformance-out-'))
  try {
    const child = spawn(NODE22, [SUITE, ...args, '--output-dir', out], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let log = ''
    child.stdout.on('data', (chunk: Buffer) => {
      log += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString()
    })
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        log += `\n[killed after ${timeoutMs} ms]`
        child.kill('SIGKILL')
      }, timeoutMs)
      child.once('exit', () => {
        clearTimeout(timer)
        resolve()
      })
    })
    return { results: readResults(out), log }
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}

/** checks.json files sit in `<scenario>-<ISO time with - for : and .>/`, the scenario may hold "/". */
function readResults(out: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>()
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const full = path.join(dir, entry.name)
      const match = /^(.*)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry.name)
      if (match && existsSync(path.join(full, 'checks.json')))
        results.set(prefix + match[1], JSON.parse(readFileSync(path.join(full, 'checks.json'), 'utf8')) as Check[])
      else walk(full, `${prefix}${entry.name}/`)
    }
  }
  walk(out, '')
  return results
}

/** The scenario passed: it reported checks and none of them failed. */
export function passed(checks: readonly Check[] | undefined): boolean {
  return checks !== undefined && checks.length > 0 && checks.every((check) => check.status !== 'FAILURE')
}

/** The failed checks, as `id: message` lines. */
export function failures(checks: readonly Check[] | undefined): string[] {
  if (checks === undefined) return ['(no results: the scenario did not run)']
  return checks
    .filter((check) => check.status === 'FAILURE')
    .map((check) => `${check.id}: ${check.errorMessage ?? 'failed'}`)
}

/** A scenario's checks in a run of the server scenarios (undefined: it did not run, or the run did not happen). */
export function scenarioChecks(run: SuiteRun | undefined, scenario: string): Check[] | undefined {
  return run?.results.get(`server-${scenario}`)
}

/** The ids of the checks that succeeded. */
export function succeeded(checks: readonly Check[] | undefined): string[] {
  return (checks ?? []).filter((check) => check.status === 'SUCCESS').map((check) => check.id)
}

/** The server scenarios of `scenarios` that did not pass in `run`. */
export function failing(run: SuiteRun | undefined, scenarios: readonly string[]): string[] {
  return scenarios.filter((scenario) => !passed(scenarioChecks(run, scenario)))
}

/**
 * Runs `setup` before all tests (bounded at 10 minutes: it starts servers and runs the suite). A
 * failure is kept, not thrown: the returned `ready` throws it in every test, so none is skipped.
 */
export function setupOnce(setup: () => Promise<void>): () => void {
  let setupError: unknown
  beforeAll(async () => {
    try {
      await setup()
    } catch (error) {
      setupError = error
    }
  }, 600_000)
  return () => {
    if (setupError !== undefined) throw setupError
  }
}
