// `toolgate view` from the command line: --out writes one self-contained file, the server mode
// prints its 127.0.0.1 URL and stops cleanly on SIGTERM, bad usage exits 2 with a clear message.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'

let dir: string
let journal: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-cli-view-'))
  journal = join(dir, 'session.jsonl')
  const common = { v: 1, ts: 1, callId: 'c1', rootCallId: 'c1', parentCallId: null, agentId: 'a', toolName: 'bash' }
  await writeFile(
    journal,
    `${JSON.stringify({ ...common, type: 'call-started', arguments: { command: 'echo hi' } })}\n${JSON.stringify({
      ...common,
      type: 'result',
      result: { isError: false, value: {}, content: [{ type: 'text', text: 'hi' }] },
      durationMs: 4,
    })}\n`,
  )
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

function capture() {
  let text = ''
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk)
      done()
    },
  })
  return { stream, text: () => text }
}

async function runCli(argv: string[]) {
  const stdout = capture()
  const stderr = capture()
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream })
  return { code, stdout: stdout.text(), stderr: stderr.text() }
}

describe('toolgate view (CLI)', () => {
  it('--out writes one self-contained HTML file', async () => {
    const out = join(dir, 'view.html')
    const { code, stdout } = await runCli(['view', journal, '--out', out])
    expect(code).toBe(0)
    expect(stdout).toBe(`wrote ${out}\n`)
    const html = await readFile(out, 'utf8')
    expect(html).toContain('Content-Security-Policy')
    expect(html).toContain('"id":"c1"')
  })

  it('rejects bad usage with exit code 2 and names the problem', async () => {
    const cases: Array<[string[], string]> = [
      [['view'], 'expected exactly one JOURNAL file'],
      [['view', journal, '--port', '70000'], '--port: expected an integer from 0 to 65535, got "70000"'],
      [['view', journal, '--bogus'], "Unknown option '--bogus'"],
      [['view', journal, '--out', 'x.html', '--port', '1'], '--out writes a file; it takes no --port'],
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['view', journal, '--approve'], '--approve needs --state FILE'],
      [['view', journal, '--state', 'turn.json'], '--state is only used with --approve'],
      [
        ['view', journal, '--approve', '--state', 'turn.json', '--out', 'x.html'],
        '--out writes a static file; it cannot take decisions (--approve)',
      ],
    ]
    for (const [argv, message] of cases) {
      const { code, stderr } = await runCli(argv)
      expect(code, argv.join(' ')).toBe(2)
      expect(stderr).toContain(message)
    }
    const missing = await runCli(['view', join(dir, 'nope.jsonl'), '--out', join(dir, 'x.html')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe(`toolgate view: journal: not found: ${join(dir, 'nope.jsonl')}\n`)
    const noState = await runCli(['view', journal, '--approve', '--state', join(dir, 'none.json')])
    expect(noState.code).toBe(1)
    expect(noState.stderr).toBe(`toolgate view: --state: not found: ${join(dir, 'none.json')}\n`)
    await writeFile(join(dir, 'not-suspended.json'), '{"v":1,"messages":[]}')
    const notSuspended = await runCli(['view', journal, '--approve', '--state', join(dir, 'not-suspended.json')])
    expect(notSuspended.code).toBe(1)
    expect(notSuspended.stderr).toContain('state.pending: missing')
    expect((await runCli(['view', '--help'])).stdout).toContain('Usage: toolgate view JOURNAL')
  })

  it('serves on 127.0.0.1, prints the URL, and exits 0 on SIGTERM', async () => {
    const bin = fileURLToPath(new URL('../../src/cli/bin.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', bin, 'view', journal, '--port', '0'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk)
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        stdout += String(chunk)
        const match = /on (http:\/\/127\.0\.0\.1:\d+\/) following /.exec(stdout)
        if (match) resolve(match[1])
      })
      void exited.then(() => reject(new Error(`exited early: ${stderr}`)))
    })
    const page = await fetch(url)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(stderr).toBe('')
  })
})
