// Two viewers over one PostgreSQL store (issue 26): both show the suspended calls live, a decision
// race between them records exactly one decision, and a resume on a third instance applies it.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JsonValue } from '../../src/contract/json-value.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import { startViewer } from '../../src/viewer/server.js'
import { storeApproval } from '../../src/viewer/store-source.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
const dir = mkdtempSync(join(tmpdir(), 'toolgate-viewer-store-'))
beforeAll(async () => {
  server = await startPgServer()
}, 120_000)
afterAll(() => {
  server?.destroy()
  rmSync(dir, { recursive: true, force: true })
})

/** Read the viewer's event stream until `done(text)`; answers the text and the page token. */
async function readEvents(url: string, done: (text: string) => boolean): Promise<{ text: string; token: string }> {
  const controller = new AbortController()
  const response = await fetch(`${url}events`, { signal: controller.signal })
  const reader = response.body!.getReader()
  let text = ''
  while (!done(text)) {
    const { value, done: ended } = await reader.read()
    if (ended) break
    text += new TextDecoder().decode(value)
  }
  controller.abort()
  const head = /event: snapshot\ndata: (.*)\n/.exec(text)
  const token = head ? (JSON.parse(head[1]) as { token?: string }).token : undefined
  return { text, token: token ?? '' }
}

describe('the viewer over the PostgreSQL store (issue 26)', { timeout: 120_000 }, () => {
  it('suspended on A, decided in a viewer on B (racing a viewer on D), resumed on C: each call runs once', async () => {
    const url = server.createDatabase('viewers')
    const stores: Store[] = await Promise.all([0, 1, 2, 3].map(() => createPostgresStore({ connectionString: url })))
    const [onA, onB, onC, onD] = stores
    const marker = join(dir, 'marker')
    const a = await setupTurn({ marker, store: onA })
    const first = await runModelLoop({
      tools: a.tools,
      agent: a.agent,
      model: scriptedModel(),
      messages: [{ role: 'user', content: 'update the files' }],
      store: onA, // the loop journals the conversation into the store too (issue 25 item 6)
    })
    expect(first.stopReason).toBe('approval-required')
    await onA.saveTurn('turn', first.state as unknown as JsonValue)

    const viewers = await Promise.all(
      [onB, onD].map((store) =>
        startViewer({ journal: 'store', title: 'store', store, approval: storeApproval(store), pollMs: 100 }),
      ),
    )
    const seen = await Promise.all(
      viewers.map((viewer) =>
        readEvents(
          viewer.url,
          (text) =>
            text.includes('b.txt') && text.includes('c.txt') && text.includes('"stopReason":"approval-required"'),
        ),
      ),
    )
    // The turn reached both viewers from the store: its prompt, and its step listing the calls.
    for (const { text } of seen) {
      expect(text).toContain('event: turns')
      expect(text).toContain('"prompt":"update the files"')
      expect(text).toContain('"calls":["call_a","call_b","call_c"]')
    }
    for (const { token } of seen) expect(token).not.toBe('')
    const post = (i: number, callId: string, decision: 'approve' | 'deny') =>
      fetch(`${viewers[i].url}decision`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-toolgate-token': seen[i].token },
        body: JSON.stringify({ callId, decision }),
      })
    // The race: B approves call_b while D denies it.
    const [fromB, fromD] = await Promise.all([post(0, 'call_b', 'approve'), post(1, 'call_b', 'deny')])
    expect([fromB.status, fromD.status].sort()).toEqual([200, 409])
    const refused = await (fromB.status === 409 ? fromB : fromD).json()
    expect(refused.reason).toMatch(/call "call_b" was already decided \((allowed-once|denied)\)/)
    expect((await post(0, 'call_c', 'approve')).status).toBe(200)
    const turn = await onC.loadTurn('turn')
    expect(Object.keys(turn?.decisions ?? {}).sort()).toEqual(['call_b', 'call_c'])

    // Resumed on C.
    const c = await setupTurn({ marker, store: onC })
    const resumed = await resumeModelLoop({
      state: turn?.state,
      tools: c.tools,
      agent: c.agent,
      model: scriptedModel(),
      store: onC,
      turnId: 'turn',
    })
    expect(resumed.stopReason).toBe('done')
    const writes = existsSync(marker)
      ? readFileSync(marker, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('write:'))
      : []
    const approvedB = fromB.status === 200
    expect(writes.sort()).toEqual(approvedB ? ['write:b.txt', 'write:c.txt'] : ['write:c.txt'])
    // The viewers see the resume's results live (through LISTEN/NOTIFY).
    // (The stream stays open and carries updates, so this ends when the result arrives; the test's timeout bounds it.)
    const after = await readEvents(
      viewers[1].url,
      (text) => text.includes('wrote c.txt') && text.includes('"resumed":true') && text.includes('"stopReason":"done"'),
    )
    expect(after.text).toContain('wrote c.txt')
    // The resume on C journaled its turn into the same store: a resumed turn that ended done.
    expect(after.text).toMatch(/"resumed":true[^\n]*"stopReason":"done"/)
    await Promise.all(viewers.map((viewer) => viewer.close()))
    await Promise.all(stores.map((store) => store.close()))
  })
})
