// The store viewer keys pending approvals and cards by turn and call (issue 36, item 8): two open
// turns that both wait on `call_b` are two cards, each naming its turn, and a decision sent from
// one of them (the page sends the turn with the call id) is recorded on that turn only; the other
// turn's `call_b` stays pending. Over HTTP with the request the page sends, and by a click in
// headless Chromium.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JsonValue } from '../../src/contract/json-value.js'
import { runModelLoop } from '../../src/providers/index.js'
import { createPostgresStore, type Store } from '../../src/store/index.js'
import type { SessionCard } from '../../src/viewer/model.js'
import { startViewer, type ViewerServer } from '../../src/viewer/server.js'
import { storeApproval } from '../../src/viewer/store-source.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'
import { launchBrowser, watchPage } from '../viewer/browser.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let browser: Browser
const dir = mkdtempSync(join(tmpdir(), 'toolgate-viewer-turns-'))
beforeAll(async () => {
  ;[server, browser] = await Promise.all([startPgServer(), launchBrowser()])
}, 120_000)
afterAll(async () => {
  await browser?.close()
  server?.destroy()
  rmSync(dir, { recursive: true, force: true })
})

/** The same scripted turn run twice into the store, saved as turn-1 and turn-2: both wait on call_b and call_c. */
async function twoOpenTurns(name: string): Promise<{ store: Store; viewer: ViewerServer }> {
  const store = await createPostgresStore({ connectionString: server.createDatabase(name) })
  const turn = await setupTurn({ marker: join(dir, `${name}-marker`), store })
  for (const id of ['turn-1', 'turn-2']) {
    const result = await runModelLoop({
      tools: turn.tools,
      agent: turn.agent,
      model: scriptedModel(),
      messages: [{ role: 'user', content: 'update the files' }],
      store,
    })
    expect(result.stopReason).toBe('approval-required')
    await store.saveTurn(id, result.state as unknown as JsonValue)
  }
  expect((await store.pendingCalls()).map((c) => `${c.turnId}/${c.callId}`).sort()).toEqual([
    'turn-1/call_b',
    'turn-1/call_c',
    'turn-2/call_b',
    'turn-2/call_c',
  ])
  const viewer = await startViewer({
    journal: 'store',
    title: 'store',
    store,
    approval: storeApproval(store),
    pollMs: 100,
  })
  await viewer.ingested
  return { store, viewer }
}

/**
 * Read the event stream until the session has been sent (its `turns` event follows the cards);
 * answers the cards (latest JSON per card id) and the page token.
 */
async function readCards(url: string): Promise<{ cards: SessionCard[]; token: string }> {
  const controller = new AbortController()
  const response = await fetch(`${url}events`, { signal: controller.signal })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const byId = new Map<string, SessionCard>()
  let token = ''
  let buffer = ''
  try {
    for (let sent = false; !sent; ) {
      const { value, done: ended } = await reader.read()
      if (ended) break
      buffer += decoder.decode(value, { stream: true })
      const lines = buffer.split('\n')
      buffer = lines.pop() ?? ''
      for (const line of lines) {
        if (line === 'event: turns') sent = true
        if (!line.startsWith('data: {')) continue
        const data = JSON.parse(line.slice(6)) as Partial<SessionCard> & { token?: string }
        if (typeof data.token === 'string') token = data.token
        if (typeof data.id === 'string' && data.status !== undefined) byId.set(data.id, data as SessionCard)
      }
    }
  } finally {
    controller.abort()
  }
  return { cards: [...byId.values()], token }
}

const pendingB = (cards: SessionCard[]) =>
  cards.filter((c) => (c.callId ?? c.id) === 'call_b' && c.pendingApproval?.decidable === true)

describe('the store viewer decides by turn and call (issue 36, item 8)', { timeout: 180_000 }, () => {
  it('over HTTP: two open turns both pending call_b are two cards; the request the page sends decides one turn only', async () => {
    const { store, viewer } = await twoOpenTurns('turns_http')
    try {
      const { cards, token } = await readCards(viewer.url)
      const both = pendingB(cards)
      // Each card names the stored turn it waits in: the page sends it back.
      expect(both.map((c) => c.pendingApproval?.turnId).sort()).toEqual(['turn-1', 'turn-2'])
      expect(new Set(both.map((c) => c.id)).size).toBe(2)
      const post = (body: Record<string, string>) =>
        fetch(`${viewer.url}decision`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-toolgate-token': token },
          body: JSON.stringify(body),
        })
      // Without a turn, call_b could mean either: refused, nothing recorded.
      const ambiguous = await post({ callId: 'call_b', decision: 'approve' })
      expect(ambiguous.status).toBe(409)
      expect(((await ambiguous.json()) as { reason: string }).reason).toContain('name the turn')
      // What the page sends for turn-2's card: its call id, its turn, the choice.
      const card2 = both.find((c) => c.pendingApproval?.turnId === 'turn-2')!
      const sent = await post({ callId: card2.callId, turnId: card2.pendingApproval!.turnId!, decision: 'deny' })
      expect(sent.status).toBe(200)
      expect((await store.loadTurn('turn-2'))?.decisions.call_b?.kind).toBe('denied')
      expect((await store.loadTurn('turn-1'))?.decisions).toEqual({})
      // turn-1's call_b still waits, and its card still offers the buttons; turn-2's shows the decision.
      const after = await readCards(viewer.url)
      const byTurn = new Map(pendingB(after.cards).map((c) => [c.pendingApproval?.turnId, c.pendingApproval]))
      expect(byTurn.get('turn-1')).toMatchObject({ decided: null, decidable: true, turnId: 'turn-1' })
      expect(byTurn.get('turn-2')).toMatchObject({ decided: 'denied', turnId: 'turn-2' })
      expect((await store.pendingCalls()).some((c) => c.turnId === 'turn-1' && c.callId === 'call_b')).toBe(true)
    } finally {
      await viewer.close()
      await store.close()
    }
  })

  it('in Chromium: approve on one of the two call_b cards records it on that card’s turn only', async () => {
    const { store, viewer } = await twoOpenTurns('turns_page')
    let page: Page | undefined
    try {
      page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      const watch = watchPage(page)
      await page.goto(viewer.url)
      // turn-1 ran first: its call_b is the card drawn under the first turn.
      await page.locator('section.turn').first().waitFor({ timeout: 60_000 })
      const firstTurn = await page.locator('section.turn').first().getAttribute('data-turn-id')
      const mine = page.locator(`article.card[data-call-id="call_b"][data-turn-id="${firstTurn}"]`)
      await mine.locator('> .decide button.approve').waitFor({ timeout: 60_000 })
      await mine.locator('> .decide button.approve').click()
      // The page shows what became of it: recorded, or a refusal's notice.
      const settled = mine.locator('> .decide.decided, > .decide .notice:not(:text-is("sending…"))').first()
      await settled.waitFor({ timeout: 60_000 })
      expect(await mine.locator('> .decide .notice').allTextContents()).toEqual([])
      expect((await store.loadTurn('turn-1'))?.decisions.call_b?.kind).toBe('allowed-once')
      expect((await store.loadTurn('turn-2'))?.decisions).toEqual({})
      // Two call_b cards, one per turn; the other turn's still offers its buttons.
      expect(await page.locator('article.card[data-call-id="call_b"]').count()).toBe(2)
      const other = page.locator(`article.card[data-call-id="call_b"]:not([data-turn-id="${firstTurn}"])`)
      expect(await other.locator('> .decide button.approve').count()).toBe(1)
      // The first turn drawn is the one the store saved as turn-1.
      const saved = (await store.loadTurn('turn-1'))?.state as { pending?: { turnId?: string } }
      expect(saved.pending?.turnId).toBe(firstTurn)
      expect(watch.errors).toEqual([])
    } finally {
      await page?.close()
      await viewer.close()
      await store.close()
    }
  })
})
