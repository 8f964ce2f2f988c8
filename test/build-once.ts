// vitest globalSetup: the CLI tests spawn the BUILT package, so build once when dist/ is older
// than the sources (CI builds before testing, so there this is a no-op).
import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')

function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs)
  }
  return latest
}

/**
 * What the tests run, each written by a later step of the build (tsc, then the bundle scripts): the
 * oldest of them tells when the build last finished.
 */
const OUTPUTS = ['dist/cli/bin.js', 'dist/cli/bin.cjs', 'dist/cli/cli.cjs', 'dist/cli/serve-early.cjs']

export default function setup(): void {
  let built = 0
  try {
    built = Math.min(...OUTPUTS.map((file) => statSync(path.join(root, file)).mtimeMs))
  } catch {
    built = 0
  }
  // The bundle scripts shape dist/ as much as the sources do.
  const sources = Math.max(
    newest(path.join(root, 'src')),
    newest(path.join(root, 'scripts')),
    statSync(path.join(root, 'package.json')).mtimeMs,
  )
  if (built >= sources) return
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
}
