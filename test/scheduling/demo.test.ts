import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runDemo } from '../../examples/demo.js'

const repo = fileURLToPath(new URL('../..', import.meta.url))

function collect(stream: NodeJS.ReadableStream): () => string {
  let text = ''
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
  })
  return () => text
}

describe('R-SCHED the end-to-end demo', () => {
  it('runDemo replays the recorded turn and reports every outcome', async () => {
    const output = new PassThrough()
    const text = collect(output)
    const summary = await runDemo({ output, input: new PassThrough(), color: false })
    const out = text()

    const codes = summary.results.map((entry) => (entry.result.isError ? entry.result.error.info?.code : 'ok'))
    expect(codes).toEqual([
      'ok', // list_dir .
      'ok', // read_file README.md
      'ok', // read_file src/app.ts
      'TOOL_TIMEOUT', // index_workspace
      'TOOL_DENIED', // read_file .env (guard)
      'TOOL_DENIED', // write_file (asked; no TTY)
      'UNKNOWN_TOOL', // bash (restricted away)
      codes[7], // read_file of a missing file: the tool's own error code
      'ok', // list_dir src
    ])
    expect(codes[7]).not.toBe('ok')
    expect(summary.parallel).toContain('call_04 index_workspace')
    expect(summary.exclusive).toEqual(['call_06 write_file', 'call_07 bash'])
    expect(summary.maxInFlight).toBeGreaterThan(1)
    expect(summary.maxInFlight).toBeLessThanOrEqual(4)
    expect(summary.asked).toEqual(['call_06 write_file'])
    expect(summary.timedOut).toEqual(['call_04 index_workspace'])
    expect(summary.denied).toEqual(['call_05 read_file', 'call_06 write_file'])
    expect(summary.failed).toEqual(['call_07 bash', 'call_08 read_file'])
    expect(existsSync(summary.workspace)).toBe(false) // the temporary workspace is cleaned up

    // Printed as it happens, then summarized.
    for (const id of ['call_01', 'call_05', 'call_09']) expect(out).toContain(`▶ ${id}`)
    expect(out).toContain('⏱ timed out call_04 index_workspace: Tool "index_workspace" timed out after 150 ms')
    expect(out).toContain('⊘ denied call_05 read_file')
    expect(out).toContain('reading .env secrets is not allowed')
    expect(out).toContain(
      'approval needed for write_file (writes modify the workspace) — denied: no interactive terminal',
    )
    expect(out).toContain('✗ failed (UNKNOWN_TOOL) call_07 bash')
    expect(out).toContain('# tiny-app') // a real file read, rendered as a card
    for (const label of ['ran in parallel', 'ran exclusively', 'succeeded', 'asked', 'denied', 'timed out', 'failed']) {
      expect(out).toMatch(new RegExp(`^  ${label} +\\S`, 'm'))
    }
    expect(out).not.toContain('\x1b[') // no colours when asked for none
    // The run is journaled, and the demo names the command that opens the journal in the viewer.
    expect(out).toContain(`npx tsx src/cli/bin.ts view ${summary.journal}`)
    const { readFile, rm } = await import('node:fs/promises')
    const records = (await readFile(summary.journal, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(records.filter((r) => r.type === 'result')).toHaveLength(summary.results.length)
    await rm(summary.journal, { force: true })
    expect(out).not.toContain('API_TOKEN') // the guarded secret never reaches the output
  })

  it('`tsx examples/demo.ts` runs to completion without a TTY and exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      cwd: repo,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    })
    child.stdin.end()
    const stdout = collect(child.stdout)
    const stderr = collect(child.stderr)
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(stderr()).toBe('')
    expect(code).toBe(0)
    expect(stdout()).toContain('toolgate demo')
    expect(stdout()).toMatch(/^ {2}timed out +call_04 index_workspace$/m)
    expect(stdout()).toMatch(/^ {2}denied +call_05 read_file, call_06 write_file$/m)
  })
})
