// Reading the config file once per process. The executable's first script (serve-early.ts) reads
// and checks the config to spawn the upstreams before the CLI loads; the CLI then checks the very
// text that script read instead of reading the file again: the file may be a pipe that gives its
// content only once (`--config <(...)`, /dev/stdin), and both must see the same config.
import { readFile } from 'node:fs/promises'
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
export async function readConfigText(file: string): Promise<string> {
  const holder = kept()
  const text = holder.texts.get(file)
  if (text !== undefined) {
    holder.texts.delete(file)
    return text
  }
  const read = await readFile(file, 'utf8')
  if (holder.keep) holder.texts.set(file, read)
  return read
}
