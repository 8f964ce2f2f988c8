// The entry of the executable's first script (dist/cli/serve-early.cjs, a small bundle of its own):
// for `toolgate serve`, read the flags and the config and spawn the stdio upstream servers before
// the CLI's big bundle is read, compiled and run, so that their start overlaps all of that. It
// uses the CLI's own flag and config checks, spawns only when they pass, and says nothing: the CLI
// then reads the same flags and config text again, reports any problem as it always does, and
// takes the processes over (or stops them) instead of spawning its own.
import { keepConfigTexts } from './config-read.js'
import { SERVE_FLAGS, spawnUpstreamsEarly } from './serve-spawn.js'
import { readSettings } from './settings.js'

/** Spawn the upstream servers of a `serve` run now, when its flags and config are good; never throws. */
export async function spawnBeforeLoad(argv: readonly string[]): Promise<void> {
  const [name, ...rest] = argv
  if (name !== 'serve' || rest.includes('--help') || rest.includes('-h')) return
  try {
    keepConfigTexts()
    const settings = await readSettings(rest, SERVE_FLAGS)
    // Serving HTTP first checks who may reach it (and may refuse to start): that stays the CLI's.
    if (settings.http === undefined) spawnUpstreamsEarly(settings)
  } catch {
    // The CLI finds the same problem and reports it.
  }
}
