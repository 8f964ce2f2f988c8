// The full-text index is built on its first search (about half a second at 1,000 tools with the
// thesaurus, on a busy machine): a cost the first `search_tools` request would wait for. Once the
// registrations settle, it is built in short idle slices instead, and the thesaurus opened, so the
// first search finds both ready. A search that comes first builds what is left itself, as before.
import type { TextSearchEngine } from './engine.js'
import { openThesaurusStep, prefetchThesaurus } from './thesaurus.js'

// How long registrations must pause before the build starts: a start registers its upstreams'
// tools in bursts, and its first listing (the gateway's cold start) should not share the CPU with it.
const SETTLE_MS = 250
// One slice's budget on the event loop, and how many tools are indexed between two clock reads.
const SLICE_MS = 4
const STEP = 16
// Words a search expands and matches the way a request's are (read from the thesaurus too).
const WARM_QUERY = 'find files'

export interface IdleBuild {
  /** Tools were added: build once they settle, if the index is not built yet. */
  changed(): void
  /** Stop building (the feature is uninstalled). */
  stop(): void
  /** @internal Resolves once the index is built and the thesaurus open by this (tests). */
  readonly done: Promise<void>
}

/** Build `engine`'s index in idle slices after its tools settle; never twice, never in one block. */
export function idleBuild(engine: TextSearchEngine): IdleBuild {
  let timer: NodeJS.Timeout | undefined
  let slice: NodeJS.Immediate | undefined
  let changes = 0
  let seen = 0
  let stopped = false
  let readAhead = false
  let finish: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  const arm = () => {
    seen = changes
    timer = setTimeout(settled, SETTLE_MS)
    // A process that would otherwise exit does not wait for a build nobody may need.
    timer.unref()
  }
  const settled = () => {
    timer = undefined
    if (stopped) return
    // More tools came while waiting: wait for them to settle too.
    if (changes !== seen) return arm()
    step()
  }
  const step = () => {
    slice = undefined
    if (stopped) return
    let ready: boolean
    try {
      const began = performance.now()
      do ready = engine.buildStep(STEP)
      while (!ready && performance.now() - began < SLICE_MS)
    } catch {
      // A throwing `serverOf`: the search that comes will throw it where it can be seen.
      stopped = true
      return
    }
    // Then the thesaurus: its four index files (6 MB) read off the main thread, then opened a part
    // per slice.
    if (ready && !readAhead) {
      readAhead = true
      void prefetchThesaurus().then(() => {
        if (stopped) return
        slice = setImmediate(step)
        slice.unref()
      })
      return
    }
    if (ready) ready = openThesaurusStep()
    if (!ready) {
      slice = setImmediate(step)
      slice.unref()
      return
    }
    // A search that picks nothing, so the search's own code is compiled before a request needs it.
    engine.search(WARM_QUERY, () => false, 1)
    finish()
  }
  return {
    changed() {
      changes++
      if (timer === undefined && slice === undefined && !stopped && !engine.isBuilt && engine.size > 0) arm()
    },
    stop() {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      if (slice !== undefined) clearImmediate(slice)
      timer = undefined
      slice = undefined
    },
    done,
  }
}
