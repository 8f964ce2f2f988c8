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
