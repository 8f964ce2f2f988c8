// Reading the config file once per process. The executable's first script (serve-early.ts) reads
// and checks the config to spawn the upstreams before the CLI loads; the CLI then checks the very
// text that script read instead of reading the file again: the file may be a pipe that gives its
// content only once (`--config <(...)`, /dev/stdin), and both must see the same config.
import { readFile } from 'node:fs/promises'

/** Kept on the global object: the first script and the CLI bundle each have their own copy of this module. */
const KEY = Symbol.for('toolgate.configText')

interface Kept {
  /** Whether reads are kept for a later reader (set by the first script). */
  keep: boolean
  texts: Map<string, string>
}

function kept(): Kept | undefined {
  const value = (globalThis as Record<symbol, unknown>)[KEY]
  return typeof value === 'object' && value !== null ? (value as Kept) : undefined
}

/** From now on, a config file read is kept for the next read of the same path in this process. */
export function keepConfigTexts(): void {
  ;(globalThis as Record<symbol, unknown>)[KEY] = { keep: true, texts: new Map() } satisfies Kept
}

/** The config file's text: the one kept for this path (taken, so only once), or read now. */
export async function readConfigText(file: string): Promise<string> {
  const holder = kept()
  const text = holder?.texts.get(file)
  if (text !== undefined) {
    holder?.texts.delete(file)
    return text
  }
  const read = await readFile(file, 'utf8')
  if (holder?.keep === true) holder.texts.set(file, read)
  return read
}
