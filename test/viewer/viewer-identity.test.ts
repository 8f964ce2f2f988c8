// The viewer shows who made each call and who decided an approval, and filters by caller
// (issue 24 item 5), in headless Chromium against a journal with identities and one without.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startViewer } from '../../src/viewer/server.js'
import { launchBrowser, watchPage } from './browser.js'

let dir: string
let browser: Browser

function line(type: string, callId: string, toolName: string, subject: string | null, extra: object = {}): string {
  const identity = subject === null ? {} : { identity: { subject, groups: ['dev'], scopes: [] } }
  return JSON.stringify({
    v: 1,
    type,
    ts: 1_700_000_000_000,
    callId,
    rootCallId: callId,
    parentCallId: null,
    agentId: subject === null ? null : `toolgate/${subject}`,
    toolName,
    ...identity,
    ...extra,
  })
}

const ok = { result: { isError: false, value: 'done', content: [{ type: 'text', text: 'done' }] }, durationMs: 2 }

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-identity-'))
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe('the viewer and identities (issue 24 item 5)', () => {
  it("shows each call's caller and who decided, and filters by caller", async () => {
    const journal = join(dir, 'audit.jsonl')
    const lines = [
      line('call-started', 'a1', 'read_file', 'alice', { arguments: { path: 'a.txt' } }),
      line('result', 'a1', 'read_file', 'alice', ok),
      line('call-started', 'b1', 'write_file', 'bob', { arguments: { path: 'b.txt', content: 'x' } }),
      line('approval-asked', 'b1', 'write_file', 'bob', {
        request: {
          callId: 'b1',
          rootCallId: 'b1',
          parentCallId: null,
          agentId: 'toolgate/bob',
          toolName: 'write_file',
          arguments: {},
          reason: 'policy asks',
        },
      }),
      line('approval-answered', 'b1', 'write_file', 'bob', {
        outcome: { kind: 'allowed-once', decidedBy: 'bob' },
        standing: false,
        source: 'service',
        decidedBy: 'bob',
      }),
      line('result', 'b1', 'write_file', 'bob', ok),
      // Written before identities were recorded: no caller.
      line('call-started', 'o1', 'list_dir', null, { arguments: { path: '.' } }),
      line('result', 'o1', 'list_dir', null, ok),
      line('call-started', '<img src=x onerror=alert(1)>', 'glob', '<b>mallory</b>', { arguments: {} }),
    ]
    await writeFile(journal, `${lines.join('\n')}\n`)
    const server = await startViewer({ journal })
    const page: Page = await browser.newPage()
    const watch = watchPage(page)
    try {
      await page.goto(server.url)
      const card = (id: string) => page.locator(`article.card[data-call-id="${id}"]`)
      await card('o1').waitFor({ timeout: 15_000 })
      expect(await card('a1').locator('> header .caller').textContent()).toBe('alice')
      expect(await card('b1').locator('> header .caller').textContent()).toBe('bob')
      expect(await card('o1').locator('> header .caller').count()).toBe(0)
      // Untrusted subjects are text, never markup.
      expect(await card('<img src=x onerror=alert(1)>').locator('> header .caller').textContent()).toBe(
        '<b>mallory</b>',
      )
      expect(await page.locator('article.card b').count()).toBe(0)
      const steps = await card('b1').locator('.approvals li').allTextContents()
      expect(steps[1]).toContain('allowed-once')
      expect(steps[1]).toContain('by bob')

      const ids = () => page.locator('main.cards > article.card').evaluateAll((els) => els.map((e) => e.dataset.callId))
      await page.selectOption('#filter-caller', 'bob')
      await expect.poll(ids, { timeout: 10_000 }).toEqual(['b1'])
      await page.selectOption('#filter-caller', 'alice')
      await expect.poll(ids, { timeout: 10_000 }).toEqual(['a1'])
      await page.selectOption('#filter-caller', { label: '(none)' })
      await expect.poll(ids, { timeout: 10_000 }).toEqual(['o1'])
      await page.selectOption('#filter-caller', '')
      await expect.poll(ids, { timeout: 10_000 }).toEqual(['a1', 'b1', 'o1', '<img src=x onerror=alert(1)>'])
      expect(watch.errors).toEqual([])
      expect(watch.dialogs).toEqual([])
    } finally {
      await page.close()
      await server.close()
    }
  })
})
