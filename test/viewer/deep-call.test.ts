// Issue 22: one journaled call whose arguments are 100,000 levels deep must not blank the viewer.
// The card shows a depth-bounded preview with a note, and every other call renders as usual: in the
// session model, on the event stream, in the static file, and in real headless Chromium.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEEPER_MARK, MAX_CARD_DEPTH } from '../../src/viewer/depth-bound.js'
import type { SessionCard } from '../../src/viewer/model.js'
import { cardJson, startViewer, type ViewerServer } from '../../src/viewer/server.js'
import { readSessionSnapshot, writeStaticViewer } from '../../src/viewer/static.js'
import { launchBrowser, watchPage } from './browser.js'
import { decodeFrame } from './frames.js'

const DEPTH = 100_000
let dir: string
let journal: string

const common = (callId: string, toolName: string) =>
  `"v":1,"ts":1,"callId":"${callId}","rootCallId":"${callId}","parentCallId":null,"agentId":"a","toolName":"${toolName}"`
const ok = (callId: string, toolName: string, text: string) =>
  `{"type":"result",${common(callId, toolName)},"durationMs":3,"result":{"isError":false,"content":[{"type":"text","text":"${text}"}]}}\n`

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-deep-'))
  journal = join(dir, 'deep.jsonl')
  // Written the way the Journal's iterative serializer writes it: one line, 100,000 nested objects.
  const deep = `${'{"next":'.repeat(DEPTH)}"bottom"${'}'.repeat(DEPTH)}`
  await writeFile(
    journal,
    `{"type":"call-started",${common('before', 'lookup')},"arguments":{"q":"first call"}}\n${ok('before', 'lookup', 'found it')}` +
      `{"type":"call-started",${common('deep', 'nest')},"arguments":${deep}}\n${ok('deep', 'nest', 'deep done')}` +
      `{"type":"call-started",${common('after', 'lookup')},"arguments":{"q":"last call"}}\n${ok('after', 'lookup', 'still here')}`,
  )
})

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Depth of a parsed JSON value, iteratively. */
function depthOf(value: unknown): number {
  let deepest = 0
  const work: Array<[unknown, number]> = [[value, 0]]
  while (work.length > 0) {
    const [node, depth] = work.pop()!
    if (node === null || typeof node !== 'object') {
      deepest = Math.max(deepest, depth)
      continue
    }
    for (const child of Object.values(node)) work.push([child, depth + 1])
  }
  return deepest
}

function checkCards(cards: SessionCard[]): void {
  expect(cards.map((c) => [c.id, c.status.kind])).toEqual([
    ['before', 'ok'],
    ['deep', 'ok'],
    ['after', 'ok'],
  ])
  const deep = cards[1]
  expect(deep.notes).toEqual([
    `the arguments nest ${DEPTH.toLocaleString('en-US')} levels deep; the first ${MAX_CARD_DEPTH} are shown`,
  ])
  // The preview: the first levels as they are, then the mark where the cut is.
  let node: unknown = deep.args
  for (let i = 0; i < MAX_CARD_DEPTH - 1; i++) node = (node as { next: unknown }).next
  expect(node).toEqual({ next: DEEPER_MARK })
  expect(depthOf(deep.args)).toBeLessThanOrEqual(MAX_CARD_DEPTH + 1)
  expect(depthOf(deep.call)).toBeLessThanOrEqual(MAX_CARD_DEPTH + 4)
  expect(cards[0].notes).toEqual([])
  expect(cards[2].notes).toEqual([])
}

describe('a call nested 100,000 levels deep (issue 22)', () => {
  it('the session bounds its card and keeps the others; the card serializes', async () => {
    const snapshot = await readSessionSnapshot(journal)
    checkCards(snapshot.cards)
    for (const card of snapshot.cards) expect(() => JSON.parse(cardJson(card))).not.toThrow()
  })

  it('a card that still cannot be serialized is sent as its header and a note', () => {
    const card = {
      id: 'x',
      seq: 0,
      parentId: null,
      rootId: 'x',
      agent: null,
      tool: 'weird',
      status: { kind: 'ok' },
      startedAt: null,
      durationMs: null,
      approvals: [],
      args: { big: 1n } as unknown,
      call: { card: 'generic', title: 'weird' },
      result: null,
      diffs: [],
      error: null,
      program: null,
      pendingApproval: null,
      notes: [],
    } as unknown as SessionCard
    const sent = JSON.parse(cardJson(card)) as SessionCard
    expect(sent.args).toBeNull()
    expect(sent.notes).toEqual(['this call cannot be shown in full: Do not know how to serialize a BigInt'])
  })

  describe('served', () => {
    let server: ViewerServer
    let browser: Browser
    beforeAll(async () => {
      ;[server, browser] = await Promise.all([startViewer({ journal, pollMs: 50 }), launchBrowser()])
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await server?.close()
    })

    it('/events sends the whole session, the deep card bounded', async () => {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: server.port, path: '/events', headers: { host: `127.0.0.1:${server.port}` } },
          (res) => {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => {
              text += chunk
              if (text.includes('\n\n', text.indexOf('event: snapshot'))) {
                req.destroy()
                resolve(text)
              }
            })
            res.on('end', () => resolve(text))
          },
        )
        req.on('error', reject)
        req.end()
      })
      const block = body.slice(body.indexOf('event: snapshot\n'), body.indexOf('\n\n', body.indexOf('event: snapshot')))
      expect(block, 'a snapshot frame').toMatch(/^event: snapshot\n/)
      checkCards(decodeFrame([...block.matchAll(/^data: (.*)$/gm)].map((m) => m[1])).cards)
    })

    it('the page shows every call, the deep one with its note, and its stream stays open', async () => {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      const watch = watchPage(page)
      try {
        await page.goto(server.url)
        await page.locator('article.card[data-call-id="after"]').waitFor({ timeout: 20_000 })
        const ids = await page
          .locator('main.cards > article.card')
          .evaluateAll((els) => els.map((e) => e.dataset.callId))
        expect(ids).toEqual(['before', 'deep', 'after'])
        const deep = page.locator('article.card[data-call-id="deep"]')
        expect(await deep.locator('.card-notes li').first().textContent()).toBe(
          `the arguments nest ${DEPTH.toLocaleString('en-US')} levels deep; the first ${MAX_CARD_DEPTH} are shown`,
        )
        expect(await deep.locator('.j-str').last().textContent()).toBe(JSON.stringify(DEEPER_MARK))
        expect(await page.locator('article.card[data-call-id="after"] .body').textContent()).toContain('still here')
        // Live, not reconnecting: the snapshot arrived and the stream was not dropped.
        expect(await page.locator('.connection').textContent()).toBe('live')
        expect(watch.errors).toEqual([])
      } finally {
        await page.close()
      }
    }, 60_000)

    it('the static file shows it too', async () => {
      const out = join(dir, 'deep.html')
      await writeStaticViewer(journal, out)
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      const watch = watchPage(page)
      try {
        await page.goto(pathToFileURL(out).href)
        await page.locator('article.card[data-call-id="after"]').waitFor({ timeout: 20_000 })
        expect(await page.locator('article.card[data-call-id="deep"] .card-notes li').count()).toBe(1)
        expect(watch.errors).toEqual([])
      } finally {
        await page.close()
      }
    }, 60_000)
  })
})
