// Issue 22 (large sessions): a run_code card draws its first 50 sub-calls and offers the rest behind
// a button, so one program that made thousands of calls cannot make its card the whole page.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startViewer, type ViewerServer } from '../../src/viewer/server.js'
import { launchBrowser, watchPage } from './browser.js'

const SUBS = 120
let dir: string
let server: ViewerServer
let browser: Browser

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-subcalls-'))
  const journal = join(dir, 'program.jsonl')
  const record = (r: Record<string, unknown>) =>
    JSON.stringify({ v: 1, ts: 1, agentId: null, rootCallId: 'prog', parentCallId: null, ...r })
  const lines = [record({ type: 'call-started', callId: 'prog', toolName: 'run_code', arguments: { code: 'loop()' } })]
  for (let i = 0; i < SUBS; i++) {
    const sub = { callId: `prog:${i}`, parentCallId: 'prog', toolName: 'lookup' }
    lines.push(record({ ...sub, type: 'call-started', arguments: { i } }))
    lines.push(record({ ...sub, type: 'result', durationMs: 1, result: { isError: false, content: [] } }))
  }
  await writeFile(journal, `${lines.join('\n')}\n`)
  ;[server, browser] = await Promise.all([startViewer({ journal }), launchBrowser()])
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe('a program with many sub-calls (issue 22)', () => {
  it('draws the first 50, then all of them on request', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const watch = watchPage(page)
    try {
      await page.goto(server.url)
      const subs = page.locator('article.card[data-call-id="prog"] > .subcalls > article.card')
      const more = page.locator('article.card[data-call-id="prog"] > .subcalls > button.more-subcalls')
      // The session arrives in several frames: wait until all of it is in (the button counts the rest).
      await expect
        .poll(async () => ((await more.count()) > 0 ? (await more.textContent())?.trim() : undefined), {
          timeout: 20_000,
        })
        .toBe(`show ${SUBS - 50} more sub-calls`)
      expect(await subs.count()).toBe(50)
      await more.click()
      await expect.poll(() => subs.count(), { timeout: 10_000 }).toBe(SUBS)
      expect(await subs.last().getAttribute('data-call-id')).toBe(`prog:${SUBS - 1}`)
      expect(await more.count()).toBe(0)
      expect(watch.errors).toEqual([])
    } finally {
      await page.close()
    }
  }, 60_000)
})
