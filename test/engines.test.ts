// Issue 37 (from the trial): the README promises Node ≥ 20. What a user installs (the package's
// dependencies and optional peers, everything the lockfile does not mark dev-only) must accept
// Node 20; dev-only parts (the conformance suite runs on the node22 binary) may need more, and
// their EBADENGINE warning on a contributor's `npm install` is stated in docs/decisions.md.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

const repo = path.resolve(import.meta.dirname, '..')
const manifest = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as {
  engines: { node: string }
  bin: Record<string, string>
}
const lock = JSON.parse(readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[]; bin?: Record<string, string> }>
}
const floor = semver.minVersion(manifest.engines.node)

describe('the Node floor the package states', () => {
  it('is on the Node 20 line (20.19, its current minor, for the CEL library of the policy)', () => {
    expect(floor?.major).toBe(20)
  })

  it('is accepted by every package a user installs', () => {
    const refusing: string[] = []
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (where === '' || entry.dev === true) continue
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node
      if (range === undefined) continue
      // The stated floor itself: a package that needs a later minor refuses it.
      if (!semver.satisfies(floor?.version ?? '20.0.0', range, { loose: true }))
        refusing.push(`${where}: node ${range}`)
    }
    expect(refusing).toEqual([])
  })

  it('the lockfile names the bin the manifest names, so a fresh install does not rewrite it', () => {
    const root = lock.packages['']
    const normalize = (bins: Record<string, string> | undefined) =>
      Object.fromEntries(Object.entries(bins ?? {}).map(([name, file]) => [name, path.posix.normalize(file)]))
    expect(normalize(root?.bin)).toEqual(normalize(manifest.bin))
  })
})
