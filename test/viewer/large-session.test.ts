// Issue 22: a large session must not freeze the page. The list draws only the rows near the
// viewport (the rest stand as spacers), so the page holds a bounded number of cards however long
// the session; the last call is reachable by scrolling and by search. Timings are in
// bench/viewer-scale.bench.ts and docs/performance.md; this test only bounds hangs generously.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALL_ROWS } from '../../src/viewer/client/virtual-list.js'
import { startViewer, type ViewerServer } from '../../src/viewer/server.js'
import { writeStaticViewer } from '../../src/viewer/static.js'
import { launchBrowser, watchPage } from './browser.js'
import { writeLargeJournal } from './large-journal.js'

const CALLS = 20_000
let dir: string
let journal: string
let server: ViewerServer
let browser: Browser

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-large-'))
  journal = join(dir, 'large.jsonl')
  await writeLargeJournal(journal, CALLS)
  ;[server, browser] = await Promise.all([startViewer({ journal }), launchBrowser()])
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

const cards = (page: Page) => page.locator('main.cards > article.card')
const count = (page: Page) => page.locator('#card-count').textContent()

describe(`the served viewer with ${CALLS.toLocaleString('en-US')} calls (issue 22)`, () => {
  it('draws the first cards at once and keeps the page bounded while the rest streams in', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const watch = watchPage(page)
    try {
      await page.goto(server.url)
      await page.locator('article.card[data-call-id="c0"]').waitFor({ timeout: 60_000 })
      await expect.poll(() => count(page), { timeout: 120_000, interval: 250 }).toBe(`${CALLS} / ${CALLS} calls`)
      const ids = await cards(page).evaluateAll((els) => els.map((e) => e.dataset.callId))
      expect(ids[0]).toBe('c0')
      expect(ids.length).toBeGreaterThan(0)
      // Only the rows near the viewport are in the page, not one card per call.
      expect(ids.length).toBeLessThanOrEqual(ALL_ROWS)
      expect(ids).toEqual(ids.map((_, i) => `c${i}`))

      // Scrolling to the end reaches the last call (heights are estimated until drawn, so the end
      // may move as rows are measured: scroll again until it is there).
      const last = `c${CALLS - 1}`
      await expect
        .poll(
          async () => {
            await page.mouse.wheel(0, 1_000_000)
            await page.keyboard.press('End')
            return page.locator(`article.card[data-call-id="${last}"]`).count()
          },
          { timeout: 60_000, interval: 200 },
        )
        .toBe(1)
      expect(await cards(page).count()).toBeLessThanOrEqual(ALL_ROWS)
      expect(await page.locator(`article.card[data-call-id="${last}"] .call-id`).textContent()).toBe(last)

      // Search finds it too, filtering in slices over the whole session.
      await page.fill('#search', `"${last}"`)
      await expect.poll(() => count(page), { timeout: 60_000, interval: 200 }).toBe(`1 / ${CALLS} calls`)
      expect(await cards(page).evaluateAll((els) => els.map((e) => e.dataset.callId))).toEqual([last])
      await page.fill('#search', '')
      await expect.poll(() => count(page), { timeout: 60_000, interval: 200 }).toBe(`${CALLS} / ${CALLS} calls`)
      expect(watch.errors).toEqual([])
      expect(watch.consoleErrors).toEqual([])
    } finally {
      await page.close()
    }
  }, 300_000)

  it('the --out file carries the cards in blocks and draws them the same way', async () => {
    const out = join(dir, 'large.html')
    await writeStaticViewer(journal, out)
    const html = await readFile(out, 'utf8')
    // Several data blocks, so the page parses the session in pieces.
    expect(html.match(/<script type="application\/json" class="toolgate-cards">/g)?.length).toBeGreaterThan(10)
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const watch = watchPage(page)
    try {
      await page.goto(pathToFileURL(out).href)
      await expect.poll(() => count(page), { timeout: 120_000, interval: 250 }).toBe(`${CALLS} / ${CALLS} calls`)
      const ids = await cards(page).evaluateAll((els) => els.map((e) => e.dataset.callId))
      expect(ids[0]).toBe('c0')
      expect(ids.length).toBeLessThanOrEqual(ALL_ROWS)
      expect(watch.errors).toEqual([])
    } finally {
      await page.close()
    }
  }, 300_000)
})
