// Issue 40, item 2: the file store's lease fence against a writer that read the lease long ago.
// Each take or renewal of a turn's lease links the next generation file and then removes the older
// ones, so a generation can be linked again after it was made and removed. The eight-process race
// in turn-lease.test.ts hit this only rarely; here the interleaving is pinned: the test pauses a
// writer between reading the lease and linking its next generation (at the file system's link,
// with no seam in src), runs the other party's writes to their end meanwhile, then lets it link.
import { mkdtempSync, type PathLike, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createFileStore } from '../../src/journal/file-store.js'
import { expiredLeaseOn, running } from './expired-lease.js'

/** Run once, just before the next link of a lease generation (the path linked). */
const pause = vi.hoisted(() => ({ before: undefined as ((path: string) => void) | undefined }))

// The pause sits in `linkSync` as src/journal/file-store.ts sees it. The store's writes have no
// `await` before their link, so the other party's writes, called from the pause, run to their end
// before the paused writer links.
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  return {
    ...fs,
    linkSync: (existing: PathLike, path: PathLike) => {
      const before = pause.before
      if (before !== undefined && /\.lease\/g\d+$/.test(String(path))) {
        pause.before = undefined
        before(String(path))
      }
      fs.linkSync(existing, path)
    },
  }
})

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const LONG = 600_000
const lease = (holder: string) => ({ holder, ms: LONG })

/** Two store objects on one journal (two instances), the lease generations of its one turn, its temporary files. */
function twoInstances() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-turn-lease-relink-'))
  dirs.push(dir)
  const journal = join(dir, 'journal.jsonl')
  const turns = `${journal}.turns`
  const generations = () => {
    const leases = readdirSync(turns).filter((name) => name.endsWith('.lease'))
    expect(leases).toHaveLength(1)
    return readdirSync(`${turns}/${leases[0]}`)
      .filter((name) => /^g\d+$/.test(name))
      .sort()
  }
  const temporaries = () =>
    readdirSync(turns, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.tmp'))
  return { a: createFileStore({ journal }), b: createFileStore({ journal }), generations, temporaries }
}

describe('the file store lease fence: a generation linked again after its removal loses (issue 40, item 2)', () => {
  it('a taker that read the expired lease before its holder renewed twice does not win beside the holder', async () => {
    const { a, b, generations, temporaries } = twoInstances()
    await expiredLeaseOn(a, 'turn', 'instance-a')
    expect(generations()).toEqual(['g1'])

    // The taker read generation 1 (expired) and is about to link generation 2. Meanwhile the
    // holder renews (generation 2) and saves under its lease (generation 3), removing 1 and 2.
    const renewals: (Promise<boolean> | undefined)[] = []
    pause.before = (path) => {
      expect(path).toMatch(/\/g2$/)
      renewals.push(a.leaseTurn?.('turn', lease('instance-a')))
      renewals.push(a.saveLeasedTurn?.('turn', { ...running, by: 'holder' }, lease('instance-a')))
      // The file store's writes run to their end before their promise is returned: the pause holds.
      expect(generations(), 'the holder renewed while the taker was paused').toEqual(['g3'])
    }
    expect(await b.leaseTurn?.('turn', lease('instance-b')), 'the stale taker').toBe(false)
    expect(pause.before, 'the taker paused before its link').toBeUndefined()
    expect(await Promise.all(renewals)).toEqual([true, true])
    // The stale link did not stay beside the holder's generation.
    expect(generations()).toEqual(['g3'])

    // The holder keeps the lease: the stale taker's fenced save is refused, its take too, and the
    // holder's next write lands.
    expect(await b.saveLeasedTurn?.('turn', { ...running, by: 'taker' }, lease('instance-b'))).toBe(false)
    expect(await b.loadTurn('turn')).toMatchObject({ state: { by: 'holder' }, closed: false })
    expect(await b.leaseTurn?.('turn', lease('instance-b'))).toBe(false)
    expect(await a.saveLeasedTurn?.('turn', { ...running, by: 'holder', progress: 1 }, lease('instance-a'))).toBe(true)
    expect(await b.loadTurn('turn')).toMatchObject({ state: { by: 'holder', progress: 1 }, closed: false })
    expect(generations()).toEqual(['g4'])
    expect(temporaries()).toEqual([])
  })

  it("a stale holder's fenced write, paused before its link while a taker takes and saves, does not land", async () => {
    const { a, b, generations, temporaries } = twoInstances()
    await expiredLeaseOn(a, 'turn', 'instance-a')

    // The stale holder read its own generation 1 (expired) and is about to link generation 2 with
    // its result. Meanwhile a taker takes the lease (generation 2) and saves (generation 3).
    const taker: (Promise<boolean> | undefined)[] = []
    pause.before = (path) => {
      expect(path).toMatch(/\/g2$/)
      taker.push(b.leaseTurn?.('turn', lease('instance-b')))
      taker.push(b.saveLeasedTurn?.('turn', { ...running, by: 'taker' }, lease('instance-b')))
      expect(generations(), 'the taker took and saved while the holder was paused').toEqual(['g3'])
    }
    const late = { ...running, by: 'stale', result: 'late' }
    expect(await a.saveLeasedTurn?.('turn', late, lease('instance-a'), { close: true }), 'the stale write').toBe(false)
    expect(pause.before, 'the stale holder paused before its link').toBeUndefined()
    expect(await Promise.all(taker)).toEqual([true, true])

    // The taker's state stays, the turn open, and the lease the taker's.
    expect(await a.loadTurn('turn')).toMatchObject({ state: { by: 'taker' }, closed: false })
    expect(generations()).toEqual(['g3'])
    expect(await a.leaseTurn?.('turn', lease('instance-a'))).toBe(false)
    expect(await b.saveLeasedTurn?.('turn', { ...running, by: 'taker', progress: 1 }, lease('instance-b'))).toBe(true)
    expect(temporaries()).toEqual([])
  })
})
