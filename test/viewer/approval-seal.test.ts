// Issue 22: `toolgate view --approve --state FILE --state-key-file KEY` records decisions only into
// a sealed state whose seal verifies, seals it again, and refuses a sealed state without the key.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { stateFileApproval } from '../../src/viewer/approval-state.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'toolgate-view-seal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const file = (name: string) => join(dir, `${n++}-${name}`)
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])

const KEY = Buffer.from('0123456789abcdef0123456789abcdef\n')

async function sealedStateFile() {
  const marker = file('marker')
  const env = await setupTurn({ marker })
  const first = await runModelLoop({
    tools: env.tools,
    agent: env.agent,
    model: scriptedModel(),
    messages: [{ role: 'user', content: 'update the files' }],
    stateKey: KEY,
  })
  expect(first.stopReason).toBe('approval-required')
  const statePath = file('state.json')
  writeFileSync(statePath, JSON.stringify(first.state, null, 2))
  const keyPath = file('state.key')
  writeFileSync(keyPath, KEY)
  return { ...env, marker, statePath, keyPath }
}

async function runCli(argv: string[]) {
  let stderr = ''
  const sink = (into: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        into(String(chunk))
        done()
      },
    })
  const code = await main(argv, { stdout: sink(() => {}), stderr: sink((t) => (stderr += t)) })
  return { code, stderr }
}

describe('viewer decisions into sealed states (issue 22)', () => {
  it('with the key: records the decision, seals again, and resumeModelLoop with the key applies it', async () => {
    const { statePath, tools, agent, marker } = await sealedStateFile()
    const handler = stateFileApproval(statePath, { stateKey: KEY })
    await handler.check()
    expect(await handler.decide({ callId: 'call_b', decision: 'approve' })).toEqual({ applied: true })
    const stored = JSON.parse(readFileSync(statePath, 'utf8'))
    expect(stored.decisions).toEqual({ call_b: { kind: 'allowed-once' } })
    const resumed = await resumeModelLoop({ state: stored, tools, agent, model: scriptedModel(), stateKey: KEY })
    expect(resumed.stopReason).toBe('approval-required') // call_c has no decision yet
    expect(lines(marker)).toEqual(['read:a.txt', 'write:b.txt'])
  })

  it('without the key or with another key, a sealed state is not touched; a hand-written decision breaks the seal', async () => {
    const { statePath, tools, agent, marker } = await sealedStateFile()
    const before = readFileSync(statePath, 'utf8')
    const keyless = stateFileApproval(statePath)
    await expect(keyless.check()).rejects.toThrow(/the state is sealed; give its key with --state-key-file/)
    const refused = await keyless.decide({ callId: 'call_b', decision: 'approve' })
    expect(refused).toMatchObject({ applied: false, reason: expect.stringMatching(/the state is sealed/) })
    const wrong = stateFileApproval(statePath, { stateKey: Buffer.from('another key of enough length') })
    await expect(wrong.check()).rejects.toThrow(/state\.seal: does not verify under the state key/)
    expect((await wrong.decide({ callId: 'call_b', decision: 'approve' })).applied).toBe(false)
    expect(readFileSync(statePath, 'utf8')).toBe(before)
    // A decision written into the file by anything without the key is refused on resume.
    const forged = { ...JSON.parse(before), decisions: { call_b: { kind: 'allowed-once' } } }
    await expect(
      resumeModelLoop({ state: forged, tools, agent, model: scriptedModel(), stateKey: KEY }),
    ).rejects.toThrow(/state\.seal: does not verify/)
    writeFileSync(statePath, JSON.stringify(forged))
    const keyed = stateFileApproval(statePath, { stateKey: KEY })
    expect((await keyed.decide({ callId: 'call_c', decision: 'approve' })).applied).toBe(false)
    expect(lines(marker)).toEqual(['read:a.txt'])
  })

  it('toolgate view: --state-key-file is checked, and a sealed state without a key is refused at start', async () => {
    const { statePath, keyPath } = await sealedStateFile()
    const journal = file('journal.jsonl')
    writeFileSync(journal, '')
    const stray = await runCli(['view', journal, '--state-key-file', keyPath])
    expect(stray.code).toBe(2)
    expect(stray.stderr).toContain('--state-key-file is only used with --approve --state FILE')
    const short = file('short.key')
    writeFileSync(short, 'tiny')
    const tooShort = await runCli(['view', journal, '--approve', '--state', statePath, '--state-key-file', short])
    expect(tooShort.code).toBe(2)
    expect(tooShort.stderr).toContain('expected at least 16 bytes, got 4')
    const missing = await runCli(['view', journal, '--approve', '--state', statePath, '--state-key-file', file('none')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('--state-key-file: not found')
    const keyless = await runCli(['view', journal, '--approve', '--state', statePath])
    expect(keyless.code).toBe(1)
    expect(keyless.stderr).toContain('the state is sealed; give its key with --state-key-file FILE')
    // TOOLGATE_STATE_KEY_FILE stands in for the flag.
    process.env.TOOLGATE_STATE_KEY_FILE = short
    try {
      const fromEnv = await runCli(['view', journal, '--approve', '--state', statePath])
      expect(fromEnv.code).toBe(2)
      expect(fromEnv.stderr).toContain(`state key file ${short}: expected at least 16 bytes`)
    } finally {
      delete process.env.TOOLGATE_STATE_KEY_FILE
    }
  })
})
