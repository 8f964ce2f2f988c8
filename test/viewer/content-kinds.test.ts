// Issue 23 item 3 in the viewer: audio, resource links, embedded text and blob resources, and
// annotations, returned by a tool through the real runtime and journaled by the real Journal,
// render in headless Chromium (the static file and the served page) as a player, a link, a text
// resource and a download, with every untrusted string kept as text and no script URL linked.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ContentBlock } from '../../src/contract/content.js'
import { createToolRuntime, defineTool, Journal, type ToolExecutionInput } from '../../src/index.js'
import { startViewer } from '../../src/viewer/server.js'
import { writeStaticViewer } from '../../src/viewer/static.js'
import { launchBrowser, type PageWatch, watchPage } from './browser.js'

const INJECTION = '<img src=x onerror="window.__pwned = 1; alert(1)">'

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

/** A 0.1 s 8-bit mono 8 kHz PCM WAV of silence: 44 header bytes + 800 samples. */
function wav(): string {
  const samples = 800
  const buf = Buffer.alloc(44 + samples, 0x80)
  buf.write('RIFF', 0, 'ascii')
  buf.writeUInt32LE(36 + samples, 4)
  buf.write('WAVEfmt ', 8, 'ascii')
  buf.writeUInt32LE(16, 16)
  buf.writeUInt16LE(1, 20) // PCM
  buf.writeUInt16LE(1, 22) // mono
  buf.writeUInt32LE(8000, 24)
  buf.writeUInt32LE(8000, 28)
  buf.writeUInt16LE(1, 32)
  buf.writeUInt16LE(8, 34)
  buf.write('data', 36, 'ascii')
  buf.writeUInt32LE(samples, 40)
  return buf.toString('base64')
}

const PDF = Buffer.from('%PDF-1.4 not really\n').toString('base64') // 20 bytes

const CALLS: Record<string, ContentBlock[]> = {
  'k01-audio': [{ type: 'audio', mediaType: 'audio/wav', data: wav() }],
  'k02-audio-bad': [{ type: 'audio', mediaType: 'text/html', data: Buffer.from('<b>x</b>').toString('base64') }],
  'k03-links': [
    {
      type: 'resource-link',
      uri: 'https://example.com/docs/guide.pdf',
      name: 'guide.pdf',
      title: 'The guide',
      description: `About the guide ${INJECTION}`,
      mediaType: 'application/pdf',
      size: 2048,
      annotations: { audience: ['user'], priority: 0.8 },
    },
    { type: 'resource-link', uri: 'javascript:alert(1)', name: 'script-link' },
    { type: 'resource-link', uri: ' \tJavaScript:alert(2)', name: 'spaced-script-link' },
    { type: 'resource-link', uri: 'file:///tmp/notes.txt', name: INJECTION },
  ],
  'k04-text-resource': [
    { type: 'resource', resource: { uri: 'file:///tmp/page.html', mediaType: 'text/html', text: INJECTION } },
  ],
  'k05-blob': [
    {
      type: 'resource',
      resource: { uri: 'https://example.com/files/report%20v2.pdf?x=1', mediaType: 'application/pdf', blob: PDF },
    },
    { type: 'resource', resource: { uri: `x:/${INJECTION}`, blob: PDF } },
    { type: 'resource', resource: { uri: 'file:///tmp/dot.png', mediaType: 'image/png', blob: PNG } },
  ],
}

let dir: string
let journal: string
let browser: Browser

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-kinds-'))
  journal = join(dir, 'session.jsonl')
  await writeFile(journal, '')
  browser = await launchBrowser()
  const { ctx, tools } = await createToolRuntime()
  tools.register(
    defineTool({
      name: 'emit',
      description: 'Return the content blocks named by `which`.',
      parameters: { which: { type: 'string', required: true } },
      output: {
        schema: {
          type: 'object',
          properties: { which: { type: 'string', required: true } },
          additionalProperties: false,
        },
        render: (args) => CALLS[(args as { which: string }).which] ?? [],
      },
      execute: async (args: { which: string }) => ({ which: args.which }),
    }),
  )
  await ctx.plugin(Journal, { path: journal })
  const signal = new AbortController().signal
  for (const callId of Object.keys(CALLS)) {
    const result = await tools.execute({
      callId,
      name: 'emit',
      arguments: { which: callId },
      signal,
    } as ToolExecutionInput)
    expect(result.isError, callId).toBeFalsy()
  }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

const card = (page: Page, id: string) => page.locator(`article.card[data-call-id="${id}"]`)

async function checkKinds(page: Page, watch: PageWatch): Promise<void> {
  await card(page, 'k05-blob').waitFor({ timeout: 15_000 })

  // Audio of an audio/* type is a player the page's CSP lets load; its type and size are shown.
  const player = card(page, 'k01-audio').locator('audio[controls]')
  expect(await player.getAttribute('src')).toMatch(/^data:audio\/wav;base64,UklGR/)
  await player.evaluate(
    (el) =>
      new Promise<void>((resolve, reject) => {
        const media = el as unknown as { readyState: number; addEventListener(t: string, f: () => void): void }
        if (media.readyState >= 1) return resolve()
        media.addEventListener('loadedmetadata', () => resolve())
        media.addEventListener('error', () => reject(new Error('audio failed to load')))
        // Bounds the wait (a blocked load may fire no event at all), well inside the test's timeout.
        setTimeout(() => reject(new Error('audio metadata did not load in 15 s')), 15_000)
      }),
  )
  expect(await card(page, 'k01-audio').locator('.audio .facts').textContent()).toBe('audio/wav · 844 B')
  // Any other type is not handed to a player: type and size only.
  expect(await card(page, 'k02-audio-bad').locator('audio').count()).toBe(0)
  expect(await card(page, 'k02-audio-bad').locator('.audio .facts').textContent()).toBe('text/html · 8 B')

  // An https link: labelled by its title, opening in a new tab without opener or referrer.
  const links = card(page, 'k03-links').locator('.resource-link')
  expect(await links.count()).toBe(4)
  const guide = links.nth(0).locator('a.link')
  expect(await guide.textContent()).toBe('The guide')
  expect(await guide.getAttribute('href')).toBe('https://example.com/docs/guide.pdf')
  expect(await guide.getAttribute('target')).toBe('_blank')
  expect(await guide.getAttribute('rel')).toBe('noopener noreferrer')
  expect(await links.nth(0).locator('.facts').textContent()).toBe('application/pdf · 2 KB')
  expect(await links.nth(0).locator('.description').textContent()).toBe(`About the guide ${INJECTION}`)
  expect(await card(page, 'k03-links').locator('.annotations').textContent()).toBe('for user · priority 0.8')
  // A javascript: URI, however spelled, is text and never a link.
  for (const [i, uri] of [
    [1, 'javascript:alert(1)'],
    [2, ' \tJavaScript:alert(2)'],
  ] as const) {
    expect(await links.nth(i).locator('a').count()).toBe(0)
    expect(await links.nth(i).locator('.uri').textContent()).toBe(uri)
  }
  expect(await card(page, 'k03-links').locator('a[href^="javascript"], a[href^=" "]').count()).toBe(0)
  // A file: link named by an injection string: a link whose label is that string as text.
  const fileLink = links.nth(3).locator('a.link')
  expect(await fileLink.getAttribute('href')).toBe('file:///tmp/notes.txt')
  expect(await fileLink.textContent()).toBe(INJECTION)

  // An embedded text resource: its URI over its text, the markup in it kept as text.
  const textResource = card(page, 'k04-text-resource').locator('.resource')
  expect(await textResource.locator('.resource-head .uri').textContent()).toBe('file:///tmp/page.html')
  expect(await textResource.locator('.resource-head .facts').textContent()).toBe('text/html')
  expect(await textResource.locator('pre.text').textContent()).toBe(INJECTION)

  // A blob: URI, type and size, and a download of octet-stream bytes named from the URI.
  const blobs = card(page, 'k05-blob').locator('.resource.blob')
  expect(await blobs.count()).toBe(3)
  expect(await blobs.nth(0).locator('.uri').textContent()).toBe('https://example.com/files/report%20v2.pdf?x=1')
  expect(await blobs.nth(0).locator('.facts').textContent()).toBe('application/pdf · 20 B')
  const download = blobs.nth(0).locator('a.download')
  expect(await download.getAttribute('download')).toBe('report v2.pdf')
  expect(await download.getAttribute('href')).toBe(`data:application/octet-stream;base64,${PDF}`)
  expect(await download.getAttribute('target')).toBeNull()
  // An untyped blob whose URI carries markup: "binary", and the name is an inert attribute value.
  expect(await blobs.nth(1).locator('.facts').textContent()).toBe('binary · 20 B')
  expect(await blobs.nth(1).locator('a.download').getAttribute('download')).toBe(INJECTION)
  expect(await blobs.nth(1).locator('.uri').textContent()).toBe(`x:/${INJECTION}`)
  // An image blob is shown as an image too.
  const dot = blobs.nth(2).locator('img.image')
  await expect
    .poll(() => dot.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth), { timeout: 10_000 })
    .toBe(1)
  expect(await blobs.nth(2).locator('a.download').getAttribute('download')).toBe('dot.png')

  // Nothing ran: no injected element, no dialog, no script error or CSP violation.
  expect(await page.locator('main img:not(.image)').count()).toBe(0)
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()
  expect(watch.dialogs).toEqual([])
  expect(watch.errors).toEqual([])
  expect(watch.consoleErrors).toEqual([])
}

describe('toolgate view: audio, resource links, embedded resources and annotations', () => {
  it('the static --out file shows each kind, allowing data: audio in its CSP', async () => {
    const out = join(dir, 'session.html')
    await writeStaticViewer(journal, out)
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    const watch = watchPage(page)
    await page.goto(pathToFileURL(out).href)
    await checkKinds(page, watch)
    await page.close()
  }, 60_000)

  it('the served page shows each kind under its CSP', async () => {
    const server = await startViewer({ journal, pollMs: 100 })
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      const watch = watchPage(page)
      await page.goto(server.url)
      await checkKinds(page, watch)
      // Nothing but the server's own resources and data: URLs was requested.
      for (const r of watch.requests) expect(r.startsWith(server.url) || r.startsWith('data:')).toBe(true)
      await page.close()
    } finally {
      await server.close()
    }
  }, 60_000)
})
