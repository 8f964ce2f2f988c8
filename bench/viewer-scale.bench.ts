// Issue 22: the served viewer over a large session in headless Chromium (Debian's /usr/bin/chromium).
// Writes a journal of N calls (default 100,000, about 2 KB each), serves it, opens the page and
// records every main-thread task over 50 ms (PerformanceObserver 'longtask') while the session
// loads, while the list is scrolled to the middle and the end, and while a search for the last call
// runs. Run alone: `npx tsx bench/viewer-scale.bench.ts [calls]` (it is not part of `npm run bench`).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'
import { startViewer } from '../src/viewer/server.js'
import { writeLargeJournal } from '../test/viewer/large-journal.js'
import { isMain } from './util.js'

interface Phase {
  phase: string
  ms: number
  longTasks: number
  over200: number
  longestMs: number
}

// Browser-side code is passed as strings: this project's typecheck has no DOM library.
const OBSERVE_LONG_TASKS = `
  window.__longTasks = []
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push(entry.duration)
  }).observe({ type: 'longtask', buffered: true })`
const SEARCH_DONE = "/^1 \\/ \\d+ calls$/.test(document.getElementById('card-count')?.textContent ?? '')"
const countIs = (text: string) => `document.getElementById('card-count')?.textContent === ${JSON.stringify(text)}`

/** Poll `expression` in the page (the page's CSP forbids the eval behind waitForFunction). */
async function until(page: Page, expression: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${expression}`)
    await page.waitForTimeout(100)
  }
}

async function drain(page: Page): Promise<number[]> {
  return page.evaluate<number[]>('window.__longTasks.splice(0)')
}

function summary(phase: string, ms: number, tasks: number[]): Phase {
  return {
    phase,
    ms: Math.round(ms),
    longTasks: tasks.length,
    over200: tasks.filter((t) => t > 200).length,
    longestMs: Math.round(Math.max(0, ...tasks)),
  }
}

export async function run(calls = 100_000): Promise<Phase[]> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-viewer-bench-'))
  const journal = join(dir, 'large.jsonl')
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  })
  try {
    const bytes = await writeLargeJournal(journal, calls)
    let t = performance.now()
    const server = await startViewer({ journal })
    const serverMs = performance.now() - t
    const phases: Phase[] = []
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      await page.addInitScript(OBSERVE_LONG_TASKS)
      t = performance.now()
      await page.goto(server.url)
      await page.locator('article.card').first().waitFor({ timeout: 120_000 })
      const firstCardMs = performance.now() - t
      await until(page, countIs(`${calls} / ${calls} calls`), 600_000)
      phases.push(
        summary(`load (first card at ${Math.round(firstCardMs)} ms)`, performance.now() - t, await drain(page)),
      )

      t = performance.now()
      await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight / 2)')
      await page.waitForTimeout(500)
      await page.evaluate('window.scrollBy(0, 5000)')
      await page.waitForTimeout(500)
      phases.push(summary('scroll to the middle', performance.now() - t, await drain(page)))

      t = performance.now()
      const last = `c${calls - 1}`
      for (let i = 0; i < 20; i++) {
        await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)')
        await page.waitForTimeout(100)
        if ((await page.locator(`article.card[data-call-id="${last}"]`).count()) > 0) break
      }
      await page.locator(`article.card[data-call-id="${last}"]`).waitFor({ timeout: 30_000 })
      phases.push(summary('scroll to the last call', performance.now() - t, await drain(page)))

      await page.evaluate('window.scrollTo(0, 0)')
      t = performance.now()
      await page.fill('#search', `"${last}"`)
      await until(page, SEARCH_DONE, 600_000)
      phases.push(summary('search for the last call', performance.now() - t, await drain(page)))
      const dom = await page.evaluate<number>("document.getElementsByTagName('*').length")
      console.log(
        `\n### Viewer at ${calls.toLocaleString('en-US')} calls (${(bytes / 1e6).toFixed(0)} MB journal; ` +
          `startViewer ${Math.round(serverMs)} ms; ${dom} DOM elements after the search)\n`,
      )
      console.log('| phase | wall time | tasks > 50 ms | tasks > 200 ms | longest task |')
      console.log('| --- | ---: | ---: | ---: | ---: |')
      for (const p of phases)
        console.log(`| ${p.phase} | ${p.ms} ms | ${p.longTasks} | ${p.over200} | ${p.longestMs} ms |`)
      return phases
    } finally {
      await server.close()
    }
  } finally {
    await browser.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) await run(Number(process.argv[2] ?? 100_000))
