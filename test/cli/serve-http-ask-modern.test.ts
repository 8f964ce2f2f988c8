// Issue 35, item 4: toolgate's own `ask` becomes an input-required result for a 2026-07-28 client,
// so an approval needs no held connection. The built CLI over real HTTP, raw 2026 requests with the
// `_meta` envelope: the first call is answered with an elicitation input request and a sealed
// requestState; the retry with the answer runs the call (accept) or refuses it (decline). A
// tampered, replayed, foreign or re-pointed state is refused and runs nothing; a retry missing its
// answer is refused without spending the state.
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnServe, tempDir, writeConfig } from './helpers.js'
import { APPROVAL_KEY, rawModernCall } from './raw-modern-call.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const KEY = APPROVAL_KEY

let dir: string
let cleanup: () => Promise<void>
let url: string
let child: ChildProcess

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  const config = await writeConfig(
    dir,
    {
      auth: {
        tokens: [
          { sha256: sha256('alice-token'), subject: 'alice' },
          { sha256: sha256('bob-token'), subject: 'bob' },
        ],
      },
      policy: { ask: ['write_file'] },
      // run_code beside the tools: a sub-call's ask stays inside the program (see the last test).
      mode: 'both',
    },
    'ask.json',
  )
  ;({ child, url } = await spawnServe(['--http', '0', '--root', dir, '--config', config]))
}, 60_000)
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  await cleanup()
})

interface Reply {
  id?: unknown
  error?: { code: number; message: string }
  result?: {
    resultType?: string
    inputRequests?: Record<string, { method: string; params: { message: string; requestedSchema: unknown } }>
    requestState?: string
    isError?: boolean
    content?: { type: string; text?: string }[]
  }
}

const call = (
  token: string,
  args: Record<string, unknown>,
  retry?: { state: string; answer: unknown },
  name = 'write_file',
): Promise<Reply> => rawModernCall<Reply>(url, token, name, args, retry)

const accept = { action: 'accept', content: { approve: true } }

/** The first round of a write: its input-required result, the file not written. */
async function ask(token: string, file: string): Promise<{ state: string; args: Record<string, unknown> }> {
  const args = { path: file, content: `written ${file}` }
  const first = await call(token, args)
  expect(first.result?.resultType).toBe('input_required')
  const question = first.result?.inputRequests?.[KEY]
  expect(question?.method).toBe('elicitation/create')
  expect(question?.params.message).toMatch(/write_file/)
  expect(question?.params.message).toContain(file)
  expect(typeof first.result?.requestState).toBe('string')
  expect(existsSync(path.join(dir, file))).toBe(false)
  return { state: first.result?.requestState as string, args }
}

describe('an ask for a 2026 client is an input-required result', { timeout: 90_000 }, () => {
  it('accept runs the call once; the same state replayed is refused', async () => {
    const { state, args } = await ask('alice-token', 'ok.txt')
    const done = await call('alice-token', args, { state, answer: accept })
    expect(done.error).toBeUndefined()
    expect(done.result?.isError).not.toBe(true)
    expect(await readFile(path.join(dir, 'ok.txt'), 'utf8')).toBe('written ok.txt')
    // Replayed after use: refused before anything runs.
    const replay = await call('alice-token', args, { state, answer: accept })
    expect(replay.error?.code).toBe(-32602)
    expect(replay.error?.message).toMatch(/already been used/)
  })

  it('a retry without the answer, or with a malformed one, is refused and spends nothing; the complete retry runs once', async () => {
    // The answer is checked before the state's nonce is spent, as for a kept program's answers.
    const { state, args } = await ask('alice-token', 'late.txt')
    for (const answer of [undefined, 'yes', { action: 42 }]) {
      const refused = await call('alice-token', args, { state, answer })
      expect(refused.error?.code).toBe(-32602)
      expect(refused.error?.message).toMatch(/inputResponses\.toolgate\/approval: expected the answer/)
      expect(refused.error?.message).not.toMatch(/requestState refused/)
      expect(existsSync(path.join(dir, 'late.txt'))).toBe(false)
    }
    const done = await call('alice-token', args, { state, answer: accept })
    expect(done.error).toBeUndefined()
    expect(done.result?.isError).not.toBe(true)
    expect(await readFile(path.join(dir, 'late.txt'), 'utf8')).toBe('written late.txt')
    const replay = await call('alice-token', args, { state, answer: accept })
    expect(replay.error?.code).toBe(-32602)
    expect(replay.error?.message).toMatch(/already been used/)
  })

  it('decline denies the call and writes nothing', async () => {
    const { state, args } = await ask('alice-token', 'no.txt')
    const done = await call('alice-token', args, { state, answer: { action: 'decline' } })
    expect(done.result?.isError).toBe(true)
    expect(JSON.stringify(done.result?.content)).toMatch(/declined/)
    expect(existsSync(path.join(dir, 'no.txt'))).toBe(false)
  })

  it('refuses a tampered state', async () => {
    const { state, args } = await ask('alice-token', 'tamper.txt')
    const [name, version, body, mac] = state.split('.')
    const prefix = `${name}.${version}.`
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>
    const forged = Buffer.from(JSON.stringify({ ...decoded, expires: Date.now() + 365 * 86_400_000 })).toString(
      'base64url',
    )
    const reply = await call('alice-token', args, { state: `${prefix}${forged}.${mac}`, answer: accept })
    expect(reply.error?.code).toBe(-32602)
    expect(reply.error?.message).toMatch(/seal does not verify/)
    expect(existsSync(path.join(dir, 'tamper.txt'))).toBe(false)
  })

  it("refuses another caller's state", async () => {
    const { state, args } = await ask('alice-token', 'foreign.txt')
    const reply = await call('bob-token', args, { state, answer: accept })
    expect(reply.error?.code).toBe(-32602)
    expect(reply.error?.message).toMatch(/another caller/)
    expect(existsSync(path.join(dir, 'foreign.txt'))).toBe(false)
  })

  it('refuses a state presented with other arguments or for another tool', async () => {
    const { state } = await ask('alice-token', 'bound.txt')
    const other = await call('alice-token', { path: 'evil.txt', content: 'evil' }, { state, answer: accept })
    expect(other.error?.message).toMatch(/other arguments/)
    const tool = await call('alice-token', { path: 'bound.txt' }, { state, answer: accept }, 'read_file')
    expect(tool.error?.message).toMatch(/another tool/)
    expect(existsSync(path.join(dir, 'evil.txt'))).toBe(false)
    expect(existsSync(path.join(dir, 'bound.txt'))).toBe(false)
  })

  it('refuses a state it did not seal', async () => {
    // Expiry is checked with a clock in test/mcp/approval-state.test.ts (ten minutes is no test wait).
    const reply = await call(
      'alice-token',
      { path: 'x.txt', content: 'x' },
      { state: 'tg-approval.1.e30.AAAA', answer: accept },
    )
    expect(reply.error?.code).toBe(-32602)
    expect(existsSync(path.join(dir, 'x.txt'))).toBe(false)
  })

  it("denies a Code Mode sub-call's ask inside the program instead of asking (a retry would run the program again)", async () => {
    const code = `
      try {
        await tools.write_file({ path: 'sub.txt', content: 'from the program' })
        return 'written'
      } catch (error) {
        return 'refused: ' + String(error && error.message ? error.message : error)
      }`
    const reply = await call('alice-token', { description: 'write in a program', code }, undefined, 'run_code')
    expect(reply.error).toBeUndefined()
    expect(reply.result?.resultType).not.toBe('input_required')
    expect(JSON.stringify(reply.result?.content)).toMatch(
      /refused: .*Code Mode sub-call cannot be put to an MCP 2026-07-28 client/,
    )
    expect(existsSync(path.join(dir, 'sub.txt'))).toBe(false)
  })
})

describe('run_code asked about, on a gateway that keeps no programs (issue 40, item 2)', { timeout: 90_000 }, () => {
  let askedUrl: string
  let askedChild: ChildProcess | undefined
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      {
        auth: { tokens: [{ sha256: sha256('alice-token'), subject: 'alice' }] },
        policy: { ask: ['run_code', 'write_file'] },
        mode: 'both',
      },
      'asked-code.json',
    )
    // No --store: nothing keeps a program between a 2026 client's rounds.
    ;({ child: askedChild, url: askedUrl } = await spawnServe(['--http', '0', '--root', dir, '--config', config]))
  }, 60_000)
  afterAll(async () => {
    if (askedChild && askedChild.exitCode === null && askedChild.signalCode === null) {
      const exited = new Promise((resolve) => askedChild?.once('exit', resolve))
      askedChild.kill('SIGTERM')
      await exited
    }
  })

  it("the approved program's sub-call ask is denied as unkept, not as an answer meant for another call", async () => {
    const args = {
      description: 'write in an approved program',
      code: `
        try {
          await tools.write_file({ path: 'approved-sub.txt', content: 'from the program' })
          return 'written'
        } catch (error) {
          return 'refused: ' + String(error && error.message ? error.message : error)
        }`,
    }
    const first = await rawModernCall<Reply>(askedUrl, 'alice-token', 'run_code', args)
    expect(first.result?.resultType, JSON.stringify(first)).toBe('input_required')
    expect(first.result?.inputRequests?.[KEY]?.params.message).toMatch(/run_code/)
    const second = await rawModernCall<Reply>(askedUrl, 'alice-token', 'run_code', args, {
      state: first.result?.requestState as string,
      answer: accept,
    })
    expect(second.error).toBeUndefined()
    const text = JSON.stringify(second.result?.content)
    expect(text).toMatch(/refused: .*Code Mode sub-call cannot be put to an MCP 2026-07-28 client/)
    expect(text).toMatch(/does not keep the program between rounds/)
    expect(text).not.toMatch(/for another call/)
    expect(existsSync(path.join(dir, 'approved-sub.txt'))).toBe(false)
  })
})
