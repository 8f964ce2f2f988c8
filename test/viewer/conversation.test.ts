// The viewer shows the session as a conversation (issue 25 item 6), in real headless Chromium: a
// real runModelLoop with scriptedModel journals its turn into the same file as the real Journal
// plugin; the page groups each step's calls under the model's text, after the user's prompt, marks
// the calls the scheduler ran in parallel, badges bash with the sandbox that ran it, shows the
// approval wait apart from the run, and keeps the model's and the user's markup inert.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CallbackApproval,
  createAgent,
  createBashTool,
  createToolRuntime,
  Journal,
  type JournalRecord,
  readJournal,
} from '../../src/index.js'
import { runModelLoop } from '../../src/providers/index.js'
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js'
import { startViewer } from '../../src/viewer/server.js'
import { writeStaticViewer } from '../../src/viewer/static.js'
import { registerLookAndWrite } from '../journal/look-and-write.js'
import { launchBrowser, type PageWatch, TEST_OUTPUT, watchPage } from './browser.js'

const PROMPT = 'Check <b>a.ts</b> and b.ts <img src=x onerror="window.__pwned = 1; alert(1)">'
const STEP0 = 'Looking at both files first.\n<script>window.__pwned = 2; alert(2)</script>'
const STEP1 = 'All done: <img src=x onerror="window.__pwned = 3; alert(3)">'

const SCRIPT: ScriptedTurn[] = [
  {
    text: STEP0,
    toolCalls: [
      { id: 'c1-look', name: 'look', arguments: { path: 'a.ts' } },
      { id: 'c2-look', name: 'look', arguments: { path: 'b.ts' } },
      { id: 'c3-write', name: 'write', arguments: { path: 'c.ts' } },
    ],
    usage: { inputTokens: 100, outputTokens: 20 },
  },
  {
    text: 'Now the build.',
    toolCalls: [{ id: 'c4-bash', name: 'bash', arguments: { command: 'echo built' } }],
    usage: { inputTokens: 140, outputTokens: 10 },
  },
  { text: STEP1, usage: { inputTokens: 160, outputTokens: 6 } },
]

let dir: string
let browser: Browser

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-conversation-'))
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Run the scripted turn through the real runtime, tools and Journal into `journal`. */
async function runSession(journal: string): Promise<JournalRecord[]> {
  const workspace = join(dir, `ws-${Math.random().toString(36).slice(2)}`)
  await mkdir(workspace)
  const { ctx, tools } = await createToolRuntime()
  await ctx.plugin(Journal, { path: journal })
  await ctx.plugin(CallbackApproval, {
    // A person takes a moment to decide: the card shows that wait apart from the run.
    decide: async () => {
      await new Promise((resolve) => setTimeout(resolve, 50))
      return { kind: 'allowed-once' }
    },
  })
  const agent = createAgent(ctx, { id: 'agent-1' })
  registerLookAndWrite(tools)
  tools.register(createBashTool({ cwd: workspace }))
  const result = await runModelLoop({
    tools,
    agent,
    model: scriptedModel({ turns: SCRIPT }),
    messages: [
      { role: 'system', content: 'You are careful.' },
      { role: 'user', content: PROMPT },
    ],
    journal,
  })
  expect(result.stopReason).toBe('done')
  const records: JournalRecord[] = []
  for await (const record of readJournal(journal)) records.push(record)
  return records
}

const SANDBOX_LABELS: Record<string, string> = { bwrap: 'bubblewrap', none: 'no sandbox' }

async function checkConversation(page: Page, watch: PageWatch, records: JournalRecord[]): Promise<void> {
  const turn = page.locator('main.cards > section.turn')
  await page.locator('main.cards > section.turn[data-stop="done"]').waitFor({ timeout: 15_000 })
  await page.locator('article.card[data-call-id="c4-bash"][data-status="ok"]').waitFor({ timeout: 15_000 })
  expect(await turn.count()).toBe(1)
  const turnId = await turn.getAttribute('data-turn-id')
  expect(turnId).toMatch(/^turn-/)

  // Reading order: the prompt, then each step's model text followed by the calls it emitted.
  const order = await page
    .locator('main.cards > *')
    .evaluateAll((els) =>
      els
        .filter((e) => !e.classList.contains('spacer'))
        .map((e) =>
          e.classList.contains('turn')
            ? 'turn'
            : e.classList.contains('step')
              ? `step ${(e as HTMLElement).dataset.step}`
              : (e as HTMLElement).dataset.callId,
        ),
    )
  expect(order).toEqual(['turn', 'step 0', 'c1-look', 'c2-look', 'c3-write', 'step 1', 'c4-bash', 'step 2'])
  for (const [id, step] of [
    ['c1-look', '0'],
    ['c3-write', '0'],
    ['c4-bash', '1'],
  ]) {
    const card = page.locator(`article.card[data-call-id="${id}"]`)
    expect(await card.getAttribute('data-turn-id')).toBe(turnId)
    expect(await card.getAttribute('data-step')).toBe(step)
  }

  // The user's prompt and the model's text, shown as the text they are (never markup).
  expect(await turn.locator('.prompt pre.text').textContent()).toBe(PROMPT)
  const steps = page.locator('main.cards > section.step')
  expect(await steps.locator('pre.model-text').allTextContents()).toEqual([STEP0, 'Now the build.', STEP1])
  expect(await turn.locator('.turn-status').textContent()).toBe('done')
  expect(await turn.locator('.usage').textContent()).toBe('400 in · 36 out')
  expect(await steps.first().locator('.usage').textContent()).toBe('100 in · 20 out')
  expect(await page.locator('main img, main script').count()).toBe(0)
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()

  // The two looks ran in one parallel group; the write and the bash ran alone.
  const look = (id: string) => page.locator(`article.card[data-call-id="${id}"]`)
  expect(await look('c1-look').getAttribute('data-parallel-group')).toBe('c1-look')
  expect(await look('c2-look').getAttribute('data-parallel-group')).toBe('c1-look')
  expect(await look('c1-look').locator('> header .parallel').textContent()).toBe('∥ 1/2')
  expect(await look('c2-look').locator('> header .parallel').textContent()).toBe('∥ 2/2')
  expect(await look('c3-write').locator('> header .parallel').count()).toBe(0)
  expect(await look('c4-bash').getAttribute('data-parallel-group')).toBeNull()

  // bash wears the badge of the sandbox that ran it (what its result recorded); nothing else does.
  const bashResult = records.find((r) => r.type === 'result' && r.callId === 'c4-bash')
  const sandbox = (bashResult?.type === 'result' && (bashResult.result.meta as { sandbox?: string })?.sandbox) || ''
  expect(['bwrap', 'none']).toContain(sandbox)
  const bash = look('c4-bash')
  expect(await bash.getAttribute('data-sandbox')).toBe(sandbox)
  expect(await bash.locator('> header .sandbox').textContent()).toBe(SANDBOX_LABELS[sandbox])
  expect(await look('c1-look').locator('> header .sandbox').count()).toBe(0)

  // The write's approval wait is shown apart from its run; calls without approval show neither.
  const write = look('c3-write')
  expect(await write.locator('> header .timing .waited').textContent()).toMatch(
    /^waited \d+(\.\d+)? (ms|s) for approval$/,
  )
  expect(await write.locator('> header .timing .ran').textContent()).toMatch(/^ran (<1 ms|\d+(\.\d+)? (ms|s))$/)
  expect(await look('c1-look').locator('> header .timing').count()).toBe(0)

  // A filter shows the matching calls alone, without the conversation around them.
  await page.selectOption('#filter-tool', 'look')
  expect(
    await page.locator('main.cards > *').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.callId)),
  ).toEqual(['c1-look', 'c2-look'])
  await page.selectOption('#filter-tool', '')
  expect(await page.locator('main.cards > section.turn').count()).toBe(1)

  expect(watch.dialogs).toEqual([])
  expect(watch.errors).toEqual([])
  expect(watch.consoleErrors).toEqual([])
}

describe('the viewer shows the session as a conversation', () => {
  it('live: the served page follows the turn as the loop journals it', async () => {
    const journal = join(dir, 'live.jsonl')
    await writeFile(journal, '')
    const server = await startViewer({ journal, pollMs: 50 })
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      const watch = watchPage(page)
      await page.goto(server.url)
      await page.locator('.connection.live').waitFor({ timeout: 15_000 })
      const records = await runSession(journal)
      await checkConversation(page, watch, records)
      await page.screenshot({ path: join(TEST_OUTPUT, 'viewer-conversation.png'), fullPage: true })
      await page.close()
    } finally {
      await server.close()
    }
  })

  it('static: the --out file shows the same conversation', async () => {
    const journal = join(dir, 'static.jsonl')
    const records = await runSession(journal)
    const out = join(dir, 'conversation.html')
    await writeStaticViewer(journal, out)
    // The model's markup is in the file only as escaped JSON data.
    expect(await readFile(out, 'utf8')).not.toContain('<script>window.__pwned')
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const watch = watchPage(page)
    await page.goto(pathToFileURL(out).href)
    await checkConversation(page, watch, records)
    await page.close()
  })
})
