// The session viewer in real headless Chromium: the served page (live over server-sent events)
// and the static --out file, both rendering a journal of a scripted session run through the real
// runtime and tools.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startViewer } from '../../src/viewer/server.js'
import { writeStaticViewer } from '../../src/viewer/static.js'
import { launchBrowser, type PageWatch, TEST_OUTPUT, watchPage } from './browser.js'
import { INJECTIONS, runScriptedSession, type ScriptedSession } from './scripted-session.js'

let dir: string
let session: ScriptedSession
let browser: Browser

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-test-'))
  ;[session, browser] = await Promise.all([runScriptedSession(dir), launchBrowser()])
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

const card = (page: Page, id: string) => page.locator(`article.card[data-call-id="${id}"]`)

/** The checks both the served page and the static file must pass. */
async function checkSession(page: Page, watch: PageWatch): Promise<void> {
  await card(page, session.topLevel[session.topLevel.length - 1]).waitFor({ timeout: 15_000 })

  // One card per call, in journal order; run_code sub-calls nested under their run_code card.
  const topIds = await page.locator('main.cards > article.card').evaluateAll((els) => els.map((e) => e.dataset.callId))
  expect(topIds).toEqual(session.topLevel)
  const nested = await card(page, session.runCodeId)
    .locator('.subcalls > article.card')
    .evaluateAll((els) => els.map((e) => e.dataset.callId))
  expect(nested).toEqual(session.subCalls)
  expect(await page.locator('article.card').count()).toBe(session.topLevel.length + session.subCalls.length)

  // Status, agent, tool and duration on the header.
  const status = (id: string) => card(page, id).getAttribute('data-status')
  expect(await status('c01-read')).toBe('ok')
  expect(await status('c05-missing')).toBe('error')
  expect(await card(page, 'c05-missing').locator('> header .badge').textContent()).toBe('TOOL_ERROR')
  expect(await status('c06-write')).toBe('denied')
  expect(await card(page, 'c01-read').locator('> header .agent').textContent()).toBe('agent-1')
  expect(await card(page, 'c01-read').locator('> header .tool').textContent()).toBe('read_file')
  expect(await card(page, 'c01-read').locator('> header .duration').textContent()).toMatch(/\d+(\.\d+)? (ms|s)$/)

  // Approval history of the denied write: asked, then denied with the service's reason.
  const steps = await card(page, 'c06-write').locator('.approvals li').allTextContents()
  expect(steps).toHaveLength(2)
  expect(steps[0]).toContain('asked: writes modify the workspace')
  expect(steps[1]).toContain('denied: writes are not allowed in this session')

  // The diff card marks its added and removed lines.
  const edit = card(page, session.editId)
  expect(await edit.locator('.diff-line.add').allTextContents()).toEqual(["+  return 'hello, ' + name + '!'"])
  expect(await edit.locator('.diff-line.del').allTextContents()).toEqual(["-  return 'hello, ' + name"])
  expect(await edit.locator('.diff-path').first().textContent()).toBe('src/app.ts')

  // A read window has line numbers; search results are grouped by file; bash shows its exit code.
  expect(await card(page, 'c01-read').locator('.read .ln').allTextContents()).toEqual(['1', '2', '3', '4', '5'])
  expect(await card(page, 'c01-read').locator('.read code .hljs-keyword').count()).toBeGreaterThan(0)
  expect(await card(page, 'c03-grep').locator('.search-path').allTextContents()).toEqual(['src/app.ts', 'src/util.ts'])
  expect(await card(page, 'c04-bash').locator('.exit').textContent()).toBe('exit 3')
  expect(await card(page, 'c04-bash').locator('pre.output').textContent()).toContain('warning: 1 issue')

  // Code Mode: the program is shown; images are images; arguments are folded JSON.
  expect(await card(page, session.runCodeId).locator('.program').textContent()).toContain(
    "tools.grep({ pattern: 'answer' })",
  )
  const img = card(page, 'c10-shot').locator('img.image')
  expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(1)
  expect(await card(page, 'c02-edit').locator('> details.args').getAttribute('open')).toBeNull()

  // Untrusted text renders as text and never runs: no dialog, no script, no request.
  const hostile = card(page, 'c08-hostile')
  expect(await hostile.locator('> header .agent').textContent()).toBe(INJECTIONS[1])
  const echoed = await card(page, 'c09-echo').locator('pre.output').textContent()
  for (const text of INJECTIONS.slice(0, 3)) expect(echoed).toContain(text)
  expect(echoed).toContain('\u241b[31mRED\u241b[0m')
  expect(await hostile.locator('.read code').allTextContents()).toContain(INJECTIONS[0])
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()
  expect(await page.locator('main img:not(.image)').count()).toBe(0)
  expect(await page.locator('main script').count()).toBe(0)
  expect(watch.dialogs).toEqual([])
  expect(watch.errors).toEqual([])
  expect(watch.consoleErrors).toEqual([])
}

async function checkFilters(page: Page): Promise<void> {
  const shown = () => page.locator('main.cards > article.card').evaluateAll((els) => els.map((e) => e.dataset.callId))
  await page.selectOption('#filter-tool', 'bash')
  expect(await shown()).toEqual(['c04-bash', 'c09-echo'])
  await page.selectOption('#filter-tool', '')
  await page.selectOption('#filter-status', 'denied')
  expect(await shown()).toEqual(['c06-write'])
  await page.selectOption('#filter-status', '')
  await page.selectOption('#filter-agent', INJECTIONS[1])
  expect(await shown()).toEqual(['c08-hostile'])
  await page.selectOption('#filter-agent', '')
  await page.fill('#search', 'missing.md')
  expect(await shown()).toEqual(['c05-missing'])
  // A sub-call match keeps its run_code parent on the page.
  await page.fill('#search', 'c07-code:code:2')
  expect(await shown()).toEqual([session.runCodeId])
  expect(
    await card(page, session.runCodeId)
      .locator('.subcalls > article.card')
      .evaluateAll((els) => els.map((e) => e.dataset.callId)),
  ).toEqual(['c07-code:code:2'])
  await page.fill('#search', '')
  expect(await shown()).toEqual(session.topLevel)
}

describe('toolgate view: the static --out file', () => {
  it('renders every call as a card, marks diffs, keeps injections inert, and filters', async () => {
    const out = join(dir, 'session.html')
    await writeStaticViewer(session.journal, out)
    const html = await readFile(out, 'utf8')
    // Self-contained: a CSP that allows only the inline script and stylesheet it ships, by hash.
    expect(html).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-/,
    )
    expect(html).not.toMatch(/<script[^>]+src=|<link /)

    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const watch = watchPage(page)
    const url = pathToFileURL(out).href
    await page.goto(url)
    await checkSession(page, watch)
    await page.screenshot({ path: join(TEST_OUTPUT, 'viewer-static.png'), fullPage: true })
    expect(watch.requests.filter((r) => r !== url && !r.startsWith('data:'))).toEqual([])
    await checkFilters(page)
    await page.close()
  })
})

describe('toolgate view: the served page', () => {
  it('serves the session on 127.0.0.1 under a CSP and shows an appended call without a reload', async () => {
    const server = await startViewer({ journal: session.journal, pollMs: 100 })
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      const watch = watchPage(page)
      const response = await page.goto(server.url)
      expect(response?.headers()['content-security-policy']).toContain("script-src 'self'")
      await checkSession(page, watch)
      await page.screenshot({ path: join(TEST_OUTPUT, 'viewer-served.png'), fullPage: true })
      expect(await page.locator('.connection').textContent()).toBe('live')
      await checkFilters(page)

      await page.evaluate(() => {
        ;(globalThis as { __sameDocument?: boolean }).__sameDocument = true
      })
      await session.appendCall('c11-live')
      await card(page, 'c11-live').waitFor({ timeout: 10_000 })
      // The call's start and its result are two journal lines and may reach the page in two
      // events: wait for the card to settle rather than reading it between them.
      await page
        .locator('article.card[data-call-id="c11-live"]:not([data-status="running"])')
        .waitFor({ timeout: 10_000 })
      expect(await card(page, 'c11-live').getAttribute('data-status')).toBe('ok')
      expect(await page.evaluate(() => (globalThis as { __sameDocument?: boolean }).__sameDocument)).toBe(true)

      // The page asked for nothing but the server's own four resources.
      const paths = new Set(watch.requests.filter((r) => !r.startsWith('data:')).map((r) => new URL(r).pathname))
      expect([...paths].sort()).toEqual(['/', '/events', '/viewer.css', '/viewer.js'])
      for (const r of watch.requests.filter((r) => !r.startsWith('data:'))) expect(r.startsWith(server.url)).toBe(true)
      await page.close()
    } finally {
      await server.close()
    }
  })
})
