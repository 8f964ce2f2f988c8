// Bad input for the search tools, progress and result budgets: each case measures the event loop
// (the largest gap between 10 ms ticks while it runs) and asserts only a generous bound — the
// machine running the suite is shared and loaded; docs/performance.md has the measured figures.
import { execFile } from 'node:child_process'
import { closeSync, existsSync, linkSync, openSync } from 'node:fs'
import { mkdir, mkdtemp, open, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ToolRunContext } from '../../src/contract/execution.js'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createToolRuntime } from '../../src/preset/create.js'
import { ResultBudget } from '../../src/scheduling/result-budget.js'
import { TimeoutPolicy } from '../../src/scheduling/timeout-policy.js'
import { createFsTools } from '../../src/tools/index.js'
import { byName, fakeRunContext } from './helpers.js'

/**
 * Entries of the huge directory, as the issue asks. On an idle 2-core machine the whole file takes
 * about 70 s (creating and removing the files is most of it, in the hooks); the event-loop bound
 * below holds with room (glob's engine reads the directory in one call, measured at ~2 s worst
 * under load 8-12). Hook timeouts leave room for a loaded machine.
 */
const HUGE_DIR_ENTRIES = 1_000_000
/** Hard links per seed file of the huge directory (below ext4's 65,000 links per inode). */
const LINKS_PER_SEED = 50_000
/**
 * The event loop may stall this long at most in any case below: a bound on a hang, generous for a
 * machine with another suite beside it (3.4 s was seen at load 15 on 2 cores). A synchronous walk
 * of the million entries takes far longer than this.
 */
const GAP_BOUND_MS = 15_000

/** Run `work` while a 10 ms interval measures the largest gap between its ticks. */
async function maxGapDuring<T>(work: () => Promise<T>): Promise<{ value: T; gapMs: number }> {
  let last = performance.now()
  let gapMs = 0
  const timer = setInterval(() => {
    const now = performance.now()
    gapMs = Math.max(gapMs, now - last)
    last = now
  }, 10)
  try {
    const value = await work()
    gapMs = Math.max(gapMs, performance.now() - last)
    return { value, gapMs }
  } finally {
    clearInterval(timer)
  }
}

let root: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  // tmpfs when the machine has one: creating tens of thousands of files is several times faster.
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()
  root = await realpath(await mkdtemp(path.join(base, 'toolgate-bad-input-')))
  // coreutils' rm unlinks a million entries in about a quarter of the CPU time of fs.rm's walk.
  cleanup = () =>
    promisify(execFile)('rm', ['-rf', '--', root]).then(
      () => undefined,
      () => rm(root, { recursive: true, force: true }),
    )
  // A 2 GB sparse file: no disk used, but every size check sees 2 GB.
  const big = await open(path.join(root, 'huge.bin'), 'w')
  await big.truncate(2 * 1024 ** 3)
  await big.close()
  // A long line that sends a backtracking engine into catastrophic time on `(a+)+$`.
  await writeFile(path.join(root, 'evil.txt'), `${'a'.repeat(50_000)}!\nplain line\n`)
  const many = path.join(root, 'many')
  const seeds = path.join(root, 'seeds')
  await mkdir(many)
  await mkdir(seeds)
  // Each entry is a hard link to an empty file: one link() per entry instead of open() and close(),
  // about half the CPU time, and still a million regular files to list, glob and search. A new seed
  // every LINKS_PER_SEED links stays under a disk filesystem's per-file link limit (ext4: 65,000).
  // Synchronous calls are several times faster than promise batches for a million entries; the
  // loop yields between chunks so the worker stays responsive to the test runner.
  let seed = ''
  for (let i = 0; i < HUGE_DIR_ENTRIES; i += 10_000) {
    for (let k = i; k < Math.min(i + 10_000, HUGE_DIR_ENTRIES); k++) {
      if (k % LINKS_PER_SEED === 0) {
        seed = `${seeds}/s${k}`
        closeSync(openSync(seed, 'w'))
      }
      linkSync(seed, `${many}/f${k}.txt`)
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
}, 300_000)

afterAll(async () => {
  await cleanup?.()
}, 180_000)

async function run(tool: ToolDefinition, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  return (await tool.execute(args, fakeRunContext(tool.name, args))) as Record<string, unknown>
}

describe('bad input: a 2 GB file, a huge directory, a catastrophic regex', () => {
  it('a 2 GB sparse file: grep skips it by size, read_file refuses it as binary, glob and list_dir list it', async () => {
    const tools = createFsTools({ root })
    const { value: grep, gapMs: grepGap } = await maxGapDuring(() =>
      run(byName(tools, 'grep'), { pattern: 'x', glob: 'huge.bin' }),
    )
    expect(grep.total).toBe(0)
    const js = await run(byName(createFsTools({ root, ripgrep: false }), 'grep'), { pattern: 'x', glob: 'huge.bin' })
    expect(js).toMatchObject({ total: 0, filesSkipped: 1 })
    const { gapMs: readGap } = await maxGapDuring(() =>
      expect(run(byName(tools, 'read_file'), { path: 'huge.bin' })).rejects.toThrow(/^path: huge\.bin/),
    )
    expect((await run(byName(tools, 'glob'), { pattern: '*.bin' })).paths).toEqual(['huge.bin'])
    const listed = await run(byName(tools, 'list_dir'), { pattern: 'huge.*' })
    expect(listed.entries).toEqual([{ name: 'huge.bin', type: 'file' }])
    expect(Math.max(grepGap, readGap)).toBeLessThan(GAP_BOUND_MS)
  })

  it(`a directory of ${HUGE_DIR_ENTRIES.toLocaleString('en-US')} entries: every tool caps and marks the cut`, async () => {
    const tools = createFsTools({ root, limits: { walkMaxEntries: 20_000 } })
    const { value: listed, gapMs: listGap } = await maxGapDuring(() => run(byName(tools, 'list_dir'), { path: 'many' }))
    expect(listed).toMatchObject({ total: HUGE_DIR_ENTRIES, truncated: true })
    expect((listed.entries as unknown[]).length).toBe(1000)
    const { value: globbed, gapMs: globGap } = await maxGapDuring(() =>
      run(byName(tools, 'glob'), { pattern: 'many/*.txt' }),
    )
    // The entry budget cut the walk: a lower bound, marked.
    expect(globbed.truncated).toBe(true)
    expect((globbed.paths as unknown[]).length).toBe(1000)
    expect(globbed.total as number).toBeGreaterThanOrEqual(1000)
    const { value: grepped, gapMs: grepGap } = await maxGapDuring(() =>
      run(byName(tools, 'grep'), { pattern: 'anything', path: 'many' }),
    )
    expect(grepped).toMatchObject({ total: 0, truncated: false, filesSearched: HUGE_DIR_ENTRIES })
    expect(Math.max(listGap, globGap, grepGap)).toBeLessThan(GAP_BOUND_MS)
  }, 120_000)

  it('`(a+)+$` on a 50,000-character line: ripgrep answers in linear time, the event loop never stalls', async () => {
    const grep = byName(createFsTools({ root }), 'grep')
    const { value, gapMs } = await maxGapDuring(() => run(grep, { pattern: '(a+)+$', glob: 'evil.txt' }))
    // The long line ends in "!", so only "plain line" could match: it has no a-run at its end.
    expect(value).toMatchObject({ total: 0, truncated: false })
    expect(gapMs).toBeLessThan(GAP_BOUND_MS)
  })
})

describe('bad input: a progress flood and a 50 MB result', () => {
  function tool(
    name: string,
    body: (args: unknown, exec: ToolRunContext) => Promise<unknown>,
    extra: Partial<ToolDefinition> = {},
  ): ToolDefinition {
    return {
      name,
      description: name,
      parameters: { type: 'object', properties: {} },
      output: { schema: {}, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      execute: body,
      ...extra,
    }
  }

  it('100,000 progress reports a second: every one delivered in order, idle clock kept, loop responsive', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(TimeoutPolicy, { idleTimeoutMs: 500 })
    let received = 0
    let outOfOrder = 0
    let last = -1
    ctx.on('tools/progress', (_exec, progress) => {
      received++
      const n = Number(progress.message)
      if (n !== last + 1) outOfOrder++
      last = n
    })
    const reports = 100_000
    tools.register(
      tool('flood', async (_args, exec) => {
        // Bursts of 1,000 reports, yielding between bursts: ~100,000 a second on an idle machine.
        for (let i = 0; i < reports; i++) {
          exec.progress({ message: String(i), fraction: i / reports })
          if (i % 1000 === 999) await new Promise<void>((resolve) => setTimeout(resolve, 10))
        }
        return 'done'
      }),
    )
    const { value: result, gapMs } = await maxGapDuring(() =>
      tools.execute({ callId: 'flood', name: 'flood', arguments: {}, signal: new AbortController().signal }),
    )
    expect(result).toMatchObject({ isError: false, value: 'done' })
    expect(received).toBe(reports)
    expect(outOfOrder).toBe(0)
    expect(gapMs).toBeLessThan(GAP_BOUND_MS)
  }, 60_000)

  it('a 50 MB result: the model sees 32 KiB with the cut marked, the value stays whole', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(ResultBudget, {})
    const size = 50 * 1024 * 1024
    tools.register(tool('huge', async () => `${'x'.repeat(size - 4)}tail`))
    const { value: result, gapMs } = await maxGapDuring(() =>
      tools.execute({ callId: 'huge-1', name: 'huge', arguments: {}, signal: new AbortController().signal }),
    )
    expect(result.isError).toBe(false)
    expect((result.value as string).length).toBe(size)
    const text = result.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(32 * 1024)
    expect(text).toMatch(
      /\[… [\d,]+ of 52,428,800 bytes cut from the middle of this result; the full result is in the journal record for call huge-1 …\]/,
    )
    expect(text.endsWith('tail')).toBe(true)
    expect(gapMs).toBeLessThan(GAP_BOUND_MS)
  }, 60_000)
})
