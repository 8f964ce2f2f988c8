// The one spelling of a resource URI that the policy judges. A glob over the raw
// text is passed by `public/../secret`, `%2e%2e`, `%73ecret` or `//secret`, which an upstream reads
// as the denied file; so the URI is first brought to its RFC 3986 normal form (section 6.2.2:
// case, percent-encoding, dot segments), with duplicate slashes collapsed as a file system does.
// What has no single meaning (an encoded "/" or "\", a NUL, a broken escape) is refused instead.

/** The normal form, or why the URI cannot be judged. */
export type NormalizedUri =
  | { readonly ok: true; readonly uri: string }
  | { readonly ok: false; readonly reason: string }

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s
const UNRESERVED = /[A-Za-z0-9\-._~]/

/**
 * Percent-decoding of unreserved characters and upper-case hex for the rest; undefined with a
 * reason when an escape is broken or stands for a separator or a NUL.
 */
function normalizeEscapes(text: string): { text: string } | { reason: string } {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string
    if (char === '\\') return { reason: 'it contains "\\", which some readers take for "/"' }
    if (char !== '%') {
      out += char
      continue
    }
    const hex = text.slice(i + 1, i + 3)
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return { reason: `"%${hex}" is not a percent-encoded byte` }
    const decoded = String.fromCharCode(Number.parseInt(hex, 16))
    if (decoded === '/' || decoded === '\\')
      return { reason: `it contains "%${hex}", an encoded "${decoded}" whose meaning as a separator is ambiguous` }
    if (decoded === '\0') return { reason: 'it contains "%00", an encoded NUL' }
    out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`
    i += 2
  }
  return { text: out }
}

/** RFC 3986 section 5.2.4, on a path whose duplicate slashes are already collapsed. */
function removeDotSegments(path: string): string {
  const absolute = path.startsWith('/')
  const segments = (absolute ? path.slice(1) : path).split('/')
  const kept: string[] = []
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1
    if (segment === '.') {
      if (last) kept.push('')
    } else if (segment === '..') {
      kept.pop()
      if (last) kept.push('')
    } else kept.push(segment)
  })
  const joined = kept.join('/')
  return absolute ? `/${joined}` : joined
}

/**
 * The normal form of an absolute URI: scheme and host in lower case, unreserved characters
 * decoded, other escapes in upper-case hex, duplicate slashes collapsed and dot segments removed
 * from the path. Query and fragment keep their text, escapes normalized.
 */
export function normalizeResourceUri(uri: string): NormalizedUri {
  const refuse = (why: string): NormalizedUri => ({
    ok: false,
    reason: `the URI ${JSON.stringify(uri)} cannot be normalized: ${why}`,
  })
  if (uri.includes('\0')) return refuse('it contains a NUL')
  const parts = SCHEME.exec(uri)
  if (parts === null) return refuse('it has no scheme')
  const scheme = (parts[1] as string).toLowerCase()
  let rest = parts[2] as string
  const hashAt = rest.indexOf('#')
  const fragment = hashAt === -1 ? undefined : rest.slice(hashAt + 1)
  if (hashAt !== -1) rest = rest.slice(0, hashAt)
  const queryAt = rest.indexOf('?')
  const query = queryAt === -1 ? undefined : rest.slice(queryAt + 1)
  if (queryAt !== -1) rest = rest.slice(0, queryAt)
  let authority: string | undefined
  let path = rest
  if (rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2)
    authority = slash === -1 ? rest.slice(2) : rest.slice(2, slash)
    path = slash === -1 ? '' : rest.slice(slash)
  }
  const pieces: string[] = []
  for (const piece of [authority ?? '', path, query ?? '', fragment ?? '']) {
    const normal = normalizeEscapes(piece)
    if ('reason' in normal) return refuse(normal.reason)
    pieces.push(normal.text)
  }
  let [host, normalPath, normalQuery, normalFragment] = pieces as [string, string, string, string]
  if (authority !== undefined) {
    // Only the host part is case-insensitive: user information keeps its case.
    const at = host.lastIndexOf('@')
    host = at === -1 ? host.toLowerCase() : host.slice(0, at + 1) + host.slice(at + 1).toLowerCase()
  }
  normalPath = removeDotSegments(normalPath.replace(/\/{2,}/g, '/'))
  let out = `${scheme}:`
  if (authority !== undefined) out += `//${host}`
  else if (normalPath.startsWith('//')) normalPath = normalPath.replace(/^\/+/, '/')
  out += normalPath
  if (query !== undefined) out += `?${normalQuery}`
  if (fragment !== undefined) out += `#${normalFragment}`
  return { ok: true, uri: out }
}
