// Reading the config file once per process. The executable's first script (serve-early.ts) reads
// and checks the config to spawn the upstreams before the CLI loads; the CLI then checks the very
// text that script read instead of reading the file again: the file may be a pipe that gives its
// content only once (`--config <(...)`, /dev/stdin), and both must see the same config.
import { readFileSync } from 'node:fs'
import { processShared } from '../util/process-shared.js'

interface Kept {
  /** Whether reads are kept for a later reader (set by the first script). */
  keep: boolean
  readonly texts: Map<string, string>
}

/** Shared by the first script and the CLI bundle, each of which has its own copy of this module. */
const kept = (): Kept => processShared('configText', () => ({ keep: false, texts: new Map() }))

/** From now on, a config file read is kept for the next read of the same path in this process. */
export function keepConfigTexts(): void {
  kept().keep = true
}

/** The config file's text: the one kept for this path (taken, so only once), or read now. */
export function readConfigText(file: string): string {
  const holder = kept()
  const text = holder.texts.get(file)
  if (text !== undefined) {
    holder.texts.delete(file)
    return text
  }
  // Read synchronously: before the first script spawns the upstreams nothing else is waiting, and
  // node:fs/promises and the event-loop turns of an asynchronous read would only delay the spawn.
  const read = readFileSync(file, 'utf8')
  if (holder.keep) holder.texts.set(file, read)
  return read
}
