// Issue 36, item 15: the viewer answers while it reads a large journal. It listens after the first
// piece of the file, reads the rest between requests, and a page that connects meanwhile gets what
// was read so far, then the rest in order. Timings are in bench/viewer-ingest.bench.ts and
// docs/performance.md; this test observes only the order of events (answered before `ingested`).
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startViewer, type ViewerServer } from '../../src/viewer/server.js'
import { writeLargeJournal } from './large-journal.js'

const CALLS = 20_000
let dir: string
let journal: string
let server: ViewerServer | undefined

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-viewer-ingest-'))
  journal = join(dir, 'large.jsonl')
  await writeLargeJournal(journal, CALLS)
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe(`the served viewer while it reads ${CALLS.toLocaleString('en-US')} calls (issue 36, item 15)`, () => {
  it('answers requests and streams cards before the journal is read, then sends every call once read', async () => {
    server = await startViewer({ journal })
    let ingested = false
    const whenIngested = server.ingested.then(() => {
      ingested = true
    })
    const port = server.port

    // A small request is answered while the journal is still being read.
    const css = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/viewer.css' }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end()
    })
    expect(css).toBe(200)
    expect(ingested, 'answered before the journal was read').toBe(false)

    // A page connecting now gets the snapshot of what was read so far at once, and the rest after.
    const ids = new Set<string>()
    let firstFrameWhileIngesting: boolean | undefined
    let firstFrame = ''
    const all = new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/events' }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
          const end = text.lastIndexOf('\n\n')
          if (end === -1) return
          const frames = text.slice(0, end)
          text = text.slice(end + 2)
          if (firstFrameWhileIngesting === undefined && frames.includes('event: snapshot\n')) {
            firstFrameWhileIngesting = !ingested
            firstFrame = frames
          }
          for (const m of frames.matchAll(/^data: \["(c\d+)",/gm)) ids.add(m[1])
          if (ids.size === CALLS) {
            req.destroy()
            resolve()
          }
        })
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end()
    })
    await whenIngested
    await all
    expect(firstFrameWhileIngesting, 'the snapshot began before the journal was read').toBe(true)
    // Cards are built from the journal's lines when sent: the first call's result is all there.
    expect(firstFrame).toMatch(/^data: \["c0",0,/m)
    expect(firstFrame).toContain('export async function load(path: string)')
    expect([...ids].sort()).toEqual(Array.from({ length: CALLS }, (_, i) => `c${i}`).sort())
  }, 300_000)
})
