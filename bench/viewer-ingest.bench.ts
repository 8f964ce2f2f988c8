// Issue 36, item 15: the viewer while it reads a large journal. Writes a journal of N calls (default
// 128,000, about 200 MB) in a temp dir, starts `startViewer` on it in a child process, and from the
// moment the child calls it sends one small request after another (GET /viewer.css; a refused
// connection is retried, its wait counted from the first attempt), while one page's event stream is
// opened as soon as the viewer answers and read to its end. Reports the longest wait for an answer
// until the journal was read and the snapshot streamed, and the child's peak RSS (VmHWM).
// Run alone: `npx tsx bench/viewer-ingest.bench.ts [calls]` (it is not part of `npm run bench`).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeLargeJournal } from '../test/viewer/large-journal.js'
import { freePort, spawnUntil, stop } from './processes.js'
import { isMain } from './util.js'

/** The child: serve `journal` on `port`, saying on stderr when it starts and when it has read all. */
async function serve(journal: string, port: number): Promise<void> {
  const { startViewer } = await import('../src/viewer/server.js')
  process.stderr.write('starting\n')
  const server = await startViewer({ journal, port })
  // Newer viewers listen before the journal is read and say when they have read it.
  const ingested = (server as { ingested?: Promise<void> }).ingested
  if (ingested !== undefined) await ingested
  process.stderr.write('ingested\n')
}

/** One GET; answers the status once the whole body arrived, or throws (refused, reset). */
function get(port: number, path: string, onData?: (bytes: number) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.on('data', (chunk: Buffer) => onData?.(chunk.length))
      res.on('end', () => resolve(res.statusCode ?? 0))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)
  return kb ? Number(kb[1]) * 1024 : Number.NaN
}

export async function run(calls = 128_000): Promise<{ longestWaitMs: number; peakRssBytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-viewer-ingest-'))
  const journal = join(dir, 'large.jsonl')
  try {
    const bytes = await writeLargeJournal(journal, calls)
    const port = await freePort()
    const { child, match } = spawnUntil(
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', journal, String(port)],
      /starting\n/,
    )
    let ingestedAt = Number.NaN
    child.stderr?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ingested')) ingestedAt = performance.now()
    })
    try {
      await match
      const started = performance.now()
      let longest = 0
      let answered = 0
      /** When the longest wait began, from the call of startViewer. */
      let longestAt = 0
      let eventBytes = 0
      let connected = false
      let streamedAt = Number.NaN
      // Keep asking until the journal is read and the page's snapshot is through (its stream ends
      // only when the viewer closes: through means no byte for a second after the read).
      const quiet = (at: number) => Number.isFinite(at) && performance.now() > at + 1000
      const done = () => quiet(ingestedAt) && quiet(streamedAt)
      while (!done()) {
        const first = performance.now()
        for (;;) {
          try {
            await get(port, '/viewer.css')
            break
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 5))
          }
        }
        if (performance.now() - first > longest) {
          longest = performance.now() - first
          longestAt = first - started
        }
        answered++
        // The page connects as soon as the viewer answers.
        if (!connected) {
          connected = true
          void get(port, '/events', (n) => {
            eventBytes += n
            streamedAt = performance.now()
          }).catch(() => 0)
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      const peak = peakRss(child.pid!)
      const ingestMs = ingestedAt - started
      console.log(
        `\n### Viewer ingest: ${calls.toLocaleString('en-US')} calls, ${(bytes / 1e6).toFixed(0)} MB journal\n\n` +
          '| journal read (from startViewer) | requests answered | longest wait for an answer (began at) | event-stream bytes | peak RSS | RSS / journal |\n' +
          '| ---: | ---: | ---: | ---: | ---: | ---: |\n' +
          `| ${(ingestMs / 1000).toFixed(1)} s | ${answered} | ${Math.round(longest)} ms (${(longestAt / 1000).toFixed(1)} s) | ${(eventBytes / 1e6).toFixed(0)} MB | ` +
          `${(peak / 1e6).toFixed(0)} MB | ${(peak / bytes).toFixed(2)}× |`,
      )
      return { longestWaitMs: longest, peakRssBytes: peak }
    } finally {
      await stop(child)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) {
  if (process.argv[2] === '--serve') await serve(process.argv[3], Number(process.argv[4]))
  else await run(Number(process.argv[2] ?? 128_000))
}
