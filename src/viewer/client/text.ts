// Untrusted text as visible text. Preact puts strings into text nodes (never markup), so this is
// not about HTML: it makes invisible control characters visible, so an ANSI escape shows as
// "␛[31m" instead of vanishing, and bidirectional overrides cannot reorder what the reader sees.

// C0 controls except tab and newline, DEL, C1 controls, and the bidi embedding/override/isolate marks.
// biome-ignore lint/suspicious/noControlCharactersInRegex: making control characters visible is the point
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

function picture(ch: string): string {
  const code = ch.charCodeAt(0)
  if (code < 0x20) return String.fromCharCode(0x2400 + code)
  if (code === 0x7f) return '\u2421'
  return `\u27e8U+${code.toString(16).toUpperCase().padStart(4, '0')}\u27e9`
}

/** `text` with control and bidi-override characters replaced by visible stand-ins. */
export function vis(text: string): string {
  return text.replace(INVISIBLE, picture)
}

/** A short duration label. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return ''
  if (ms < 1) return '<1 ms'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
  const m = Math.floor(ms / 60_000)
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`
}

/** A clock time label for an epoch-ms timestamp. */
export function formatTime(ts: number | null): string {
  if (ts === null) return ''
  const d = new Date(ts)
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().slice(11, 23)
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * A `data:` URL for an image block, or `undefined` when the media type is not a raster image type
 * or the data is not plain base64 (so nothing but a known image can ever reach an `src`).
 */
export function imageDataUrl(mediaType: string, data: string): string | undefined {
  if (!IMAGE_TYPES.has(mediaType) || data.length % 4 !== 0 || !BASE64.test(data)) return undefined
  return `data:${mediaType};base64,${data}`
}

// A media type as a plain `type/subtype` token, so it cannot add parameters or end a `data:` URL's header.
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i

function isPlainBase64(data: string): boolean {
  return data.length % 4 === 0 && BASE64.test(data)
}

/** A `data:` URL for an audio block, or `undefined` unless the type is `audio/*` and the data plain base64. */
export function audioDataUrl(mediaType: string, data: string): string | undefined {
  if (!MEDIA_TYPE.test(mediaType) || !mediaType.toLowerCase().startsWith('audio/') || !isPlainBase64(data))
    return undefined
  return `data:${mediaType};base64,${data}`
}

/**
 * A `data:` URL to download a blob, or `undefined` when the data is not plain base64. Always typed
 * `application/octet-stream`, so even a browser that ignored `download` would not render the bytes.
 */
export function downloadDataUrl(data: string): string | undefined {
  return isPlainBase64(data) ? `data:application/octet-stream;base64,${data}` : undefined
}

const LINK_PROTOCOLS = new Set(['http:', 'https:', 'file:'])

/** The parsed `href` of an `http(s):` or `file:` URI, or `undefined` for any other scheme or no URL at all. */
export function linkHref(uri: string): string | undefined {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return undefined
  }
  return LINK_PROTOCOLS.has(url.protocol) ? url.href : undefined
}

/** A file name for a download: the URI's last path segment, without separators or controls. */
export function downloadName(uri: string): string {
  const path = uri.replace(/[?#].*$/s, '').replace(/\/+$/, '')
  let last = path.slice(path.lastIndexOf('/') + 1)
  try {
    last = decodeURIComponent(last)
  } catch {
    // an undecodable escape stays as written
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const name = last.replace(/[\u0000-\u001f\u007f/\\:]/g, '_').trim()
  return name === '' || name === '.' || name === '..' ? 'resource' : name
}
