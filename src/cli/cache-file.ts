// The file format both code caches of the CLI share (the bundle's, and the SDK files' on Node 20):
// one header line, `{"identity":…,"sha256":…,…}`, then the data. V8 checks that cached data suits
// this V8 and its flags, not that it is whole: the digest does.
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/** The header and data of a cache kept for `identity`, or undefined when none is, or it is not whole. */
export function readCacheFile(
  cacheFile: string,
  identity: string,
): { header: Record<string, unknown>; data: Buffer } | undefined {
  try {
    const whole = readFileSync(cacheFile)
    const end = whole.indexOf(10)
    if (end < 0) return undefined
    const header: unknown = JSON.parse(whole.subarray(0, end).toString('utf8'))
    if (typeof header !== 'object' || header === null) return undefined
    const fields = header as Record<string, unknown>
    const data = whole.subarray(end + 1)
    if (fields.identity !== identity || fields.sha256 !== digest(data)) return undefined
    return { header: fields, data }
  } catch {
    // None kept yet, or not readable: compiled afresh.
    return undefined
  }
}

/**
 * Write a cache whole. Another process may write the same cache at the same time: each writes its
 * own file and renames it over, so a reader sees one whole file or none. A failure only means no cache.
 */
export function writeCacheFile(
  cacheFile: string,
  identity: string,
  data: Buffer,
  extra: Record<string, unknown> = {},
): void {
  const partial = `${cacheFile}.${process.pid}.tmp`
  try {
    const header = `${JSON.stringify({ identity, sha256: digest(data), ...extra })}\n`
    writeFileSync(partial, Buffer.concat([Buffer.from(header), data]), { mode: 0o600 })
    renameSync(partial, cacheFile)
  } catch {
    try {
      unlinkSync(partial)
    } catch {
      // Never written.
    }
  }
}

function digest(data: Buffer): string {
  // Loaded here, not with this module: only a check or a write of a cache needs it, after the spawn.
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')
  return createHash('sha256').update(data).digest('hex')
}
