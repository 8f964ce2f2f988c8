// The file format both code caches of the CLI share (the bundle's, and the SDK files' on Node 20):
// one header line, `{"identity":…,"sha256":…,…}`, then the data. V8 checks that cached data suits
// this V8 and its flags, not that it is whole: the digest does. The cache of the script a `serve`
// runs before it spawns its upstreams is checked by CRC-32 (`{"identity":…,"crc32":…}`) instead:
// node:zlib's native crc32 needs no node:crypto, whose load would delay the spawn more than the
// cache saves. Either one tells a damaged or truncated file; neither is a defence against someone
// who can write the cache directory (cacheDir in load-cli.ts only uses one nobody else can).
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/** The header and data of a cache kept for `identity`, or undefined when none is, or it is not whole. */
export function readCacheFile(
  cacheFile: string,
  identity: string,
  check: CacheCheck = 'sha256',
): { header: Record<string, unknown>; data: Buffer } | undefined {
  try {
    const whole = readFileSync(cacheFile)
    const end = whole.indexOf(10)
    if (end < 0) return undefined
    const header: unknown = JSON.parse(whole.subarray(0, end).toString('utf8'))
    if (typeof header !== 'object' || header === null) return undefined
    const fields = header as Record<string, unknown>
    const data = whole.subarray(end + 1)
    if (fields.identity !== identity || fields[check] !== digest(data, check)) return undefined
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
  check: CacheCheck = 'sha256',
): void {
  const partial = `${cacheFile}.${process.pid}.tmp`
  try {
    const header = `${JSON.stringify({ identity, [check]: digest(data, check), ...extra })}\n`
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

/** How a cache file's data is checked to be whole: SHA-256, or CRC-32 where node:crypto must not load yet. */
export type CacheCheck = 'sha256' | 'crc32'

/** Whether this Node has the native CRC-32 (node:zlib, 20.15 and later). */
export function hasCrc32(): boolean {
  return typeof (createRequire(import.meta.url)('node:zlib') as { crc32?: unknown }).crc32 === 'function'
}

function digest(data: Buffer, check: CacheCheck): string {
  const load = createRequire(import.meta.url)
  if (check === 'crc32')
    return (load('node:zlib') as { crc32: (data: Buffer) => number }).crc32(data).toString(16).padStart(8, '0')
  // Loaded here, not with this module: only a check or a write of a cache needs it, after the spawn.
  const { createHash } = load('node:crypto') as typeof import('node:crypto')
  return createHash('sha256').update(data).digest('hex')
}
