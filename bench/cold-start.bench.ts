// Cold start of `toolgate serve` (issue 23): spawn → the client's initialize → the first
// `tools/list` answered, measured by the MCP SDK's client over stdio, against the upstream alone
// (server-everything `stdio`, the same measurement), with the gateway's own file tools and without
// them (`"files": false`). The cases are interleaved, each round starting at another case. Run
// after `npm run build`.
//
// Beside the wall time, the CPU time the started process itself spent up to the listing (Linux,
// from /proc; the upstream it spawns not counted), which a loaded machine blurs less. Then the
// first call (server-everything's echo) right after the listing: a start that answers its listing
// sooner by loading less before it must not just move that load in front of the first call.
//
//   COLD_START_ROUNDS   rounds (default 21)
//   COLD_START_BINS     other builds to compare, `name=path/to/dist/cli/bin.js` separated by commas
//                       (e.g. main's build in a throwaway worktree)
//   COLD_START_BINS_CONFIG  `relay` to start those builds with the `"files": false` config instead
//   COLD_START_UPSTREAMS    how many upstreams the gateway's configs list (default 1): server-everything,
//                           then server-filesystem on the bench's directory under as many names as
//                           needed (`fs`, `fs2`, ...), each its own process; "alone" stays one
//                           server-everything. (server-everything twice does not start: the gateway
//                           refuses two servers offering the same resource URIs.)
//   COLD_START_LOG      `1` to start toolgate with --verbose and tally, per case, which way the first
//                       script's first listing went (its `first listing: …` debug line; builds that
//                       do not write one count as "no line"). --verbose adds the gateway's debug lines.

import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { isMain } from './util.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
// The package's executable (the `bin` of package.json).
const BIN = path.resolve(import.meta.dirname, '../dist/cli/bin.cjs')
const ROUNDS = Number(process.env.COLD_START_ROUNDS ?? 21)
const LOG = process.env.COLD_START_LOG === '1'

/** The CPU time (user + system) process `pid` has spent so far, in ms; NaN where /proc does not say. */
function cpuOf(pid: number | null): number {
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
  } catch {
    return Number.NaN
  }
}
/** Linux's USER_HZ. */
const CLOCK_TICKS = 100

/**
 * Spawn to the first tools/list answered: the wall time and the process's own CPU time, in ms;
 * then spawn to the first call answered (`call`), the call sent as soon as the listing came.
 */
async function coldStart(args: string[]): Promise<{ wall: number; cpu: number; call: number; outcome: string }> {
  const start = performance.now()
  const client = new Client({ name: 'bench', version: '1.0.0' })
  const logged = LOG && args[0]?.endsWith('bin.cjs')
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: logged ? [...args, '--verbose'] : args,
    stderr: logged ? 'pipe' : 'ignore',
  })
  let stderr = ''
  const stderrDone = new Promise<void>((resolve) => {
    if (!logged) return resolve()
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    transport.stderr?.on('close', () => resolve())
    setTimeout(resolve, 5_000).unref()
  })
  await client.connect(transport)
  const { tools } = await client.listTools()
  const wall = performance.now() - start
  const cpu = cpuOf(transport.pid)
  const echo = tools.find((tool) => tool.name === 'echo' || tool.name.endsWith('__echo'))
  if (echo === undefined) throw new Error(`no echo tool listed by ${args.join(' ')}`)
  const result = await client.callTool({ name: echo.name, arguments: { message: 'cold' } })
  const call = performance.now() - start
  if (JSON.stringify(result.content).includes('cold') === false) throw new Error(`the echo of ${args.join(' ')} failed`)
  await client.close()
  await stderrDone
  // The first script's line, its time left out: `answered (…)`, `left to the gateway: why`, `not tried: why`.
  const line = /first listing: (.*?)(?:, at \d+ ms)?$/m.exec(stderr)?.[1]
  return { wall, cpu, call, outcome: logged ? (line ?? 'no line') : '' }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolgate-cold-bench-'))
  const config = path.join(dir, 'stdio.json')
  const upstreams = Number(process.env.COLD_START_UPSTREAMS ?? 1)
  const servers = Object.fromEntries(
    Array.from({ length: upstreams }, (_, at) =>
      at === 0
        ? ['ev', { command: process.execPath, args: [EVERYTHING, 'stdio'] }]
        : [at === 1 ? 'fs' : `fs${at}`, { command: process.execPath, args: [FILESYSTEM, dir] }],
    ),
  )
  await writeFile(config, JSON.stringify({ servers }))
  // The gateway as a pure relay: the upstream's tools and nothing of its own, so that both sides
  // list the same tools (the client's SDK compiles a validator per output schema it is shown).
  const relay = path.join(dir, 'relay.json')
  await writeFile(relay, JSON.stringify({ servers, files: false }))
  const others = (process.env.COLD_START_BINS ?? '')
    .split(',')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const at = entry.indexOf('=')
      return [entry.slice(0, at), path.resolve(entry.slice(at + 1))] as const
    })
  const cases: [string, string[]][] = [
    ['server-everything alone', [EVERYTHING, 'stdio']],
    ['toolgate serve (this build)', [BIN, 'serve', '--config', config, '--root', dir]],
    ['toolgate serve, `"files": false` (this build)', [BIN, 'serve', '--config', relay]],
    ...others.map(([name, bin]): [string, string[]] =>
      process.env.COLD_START_BINS_CONFIG === 'relay'
        ? [`toolgate serve, \`"files": false\` (${name})`, [bin, 'serve', '--config', relay]]
        : [`toolgate serve (${name})`, [bin, 'serve', '--config', config, '--root', dir]],
    ),
  ]
  const times = cases.map((): number[] => [])
  const cpus = cases.map((): number[] => [])
  const calls = cases.map((): number[] => [])
  const outcomes = cases.map(() => new Map<string, number>())
  try {
    // One unmeasured start of each warms the file cache.
    for (const [, args] of cases) await coldStart(args)
    for (let round = 0; round < ROUNDS; round++)
      for (let i = 0; i < cases.length; i++) {
        const at = (round + i) % cases.length
        const { wall, cpu, call, outcome } = await coldStart(cases[at][1])
        if (outcome !== '') outcomes[at].set(outcome, (outcomes[at].get(outcome) ?? 0) + 1)
        times[at].push(wall)
        cpus[at].push(cpu)
        calls[at].push(call)
      }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  const alone = median(times[0])
  console.log(
    `\n## Cold start to the first tools/list (stdio, Node ${process.version}, ${upstreams} upstream(s), ${ROUNDS} interleaved rounds, medians)\n`,
  )
  const aloneCall = median(calls[0])
  console.log('| case | median | ratio to alone | CPU of the process | first call answered | ratio to alone |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |')
  for (const [i, [name]] of cases.entries())
    console.log(
      `| ${name} | ${median(times[i]).toFixed(0)} ms | ${(median(times[i]) / alone).toFixed(2)}× | ${median(cpus[i]).toFixed(0)} ms | ${median(calls[i]).toFixed(0)} ms | ${(median(calls[i]) / aloneCall).toFixed(2)}× |`,
    )
  if (LOG) {
    console.log('\n| case | first listing (rounds) |\n| --- | --- |')
    for (const [i, [name]] of cases.entries())
      if (outcomes[i].size > 0)
        console.log(`| ${name} | ${[...outcomes[i]].map(([what, n]) => `${what}: ${n}`).join('; ')} |`)
  }
}

if (isMain(import.meta.url)) await run()
