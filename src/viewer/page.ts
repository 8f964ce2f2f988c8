// The HTML shells of the viewer: the served page (script and stylesheet are separate same-origin
// files) and the self-contained static file (everything inline, allowed by hash, nothing else).
import { createHash } from 'node:crypto'
import type { ViewerAssets } from './assets.js'
import { cardJson } from './card-json.js'
import type { SessionCard, SessionSnapshot } from './model.js'

/** Id of the JSON data block that carries a static file's session. */
export const SESSION_DATA_ID = 'toolgate-session'

/** Class of the data blocks that carry a static file's cards, in order, after the session block. */
export const CARD_BLOCK_CLASS = 'toolgate-cards'

/**
 * CSP of the served page: only the server's own script, stylesheet and event stream; images and audio
 * only as `data:` URLs (image and audio content blocks); no inline script, no framing, no form posts.
 */
export const SERVED_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; media-src data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** Text for an HTML text or attribute context. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * JSON safe inside a `<script type="application/json">` element: no `<` (so no `</script>` or
 * `<!--`), and no line separators a parser could trip on.
 */
export function jsonForScript(value: unknown): string {
  return safeForScript(JSON.stringify(value))
}

function safeForScript(json: string): string {
  return json
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`
}

function assertInlineSafe(text: string, tag: 'script' | 'style'): void {
  if (new RegExp(`</${tag}`, 'i').test(text)) throw new Error(`viewer asset contains "</${tag}" and cannot be inlined`)
}

const HEAD = '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'

/** The served page: a shell that loads `/viewer.css` and `/viewer.js`. */
export function servedPageHtml(title: string): string {
  return (
    `<!doctype html><html lang="en"><head>${HEAD}<title>${escapeHtml(title)} · toolgate</title>` +
    '<link rel="stylesheet" href="/viewer.css"></head><body><div id="app"></div>' +
    '<script src="/viewer.js"></script></body></html>\n'
  )
}

/**
 * The self-contained file: the session as a JSON data block, the script and stylesheet inline and
 * allowed by their hashes in a CSP meta element, so nothing else can run and nothing is fetched.
 */
/** Cards per data block of a static file, by JSON size: the page parses one block per task. */
const BLOCK_BYTES = 256 * 1024

/**
 * The cards of a static file as data blocks of about {@link BLOCK_BYTES} (JSON arrays), after the
 * head block: a large session is parsed and drawn in pieces, not in one task.
 */
function cardBlocks(cards: readonly SessionCard[]): string {
  const blocks: string[] = []
  let batch: string[] = []
  let size = 0
  const flush = () => {
    blocks.push(
      `<script type="application/json" class="${CARD_BLOCK_CLASS}">${safeForScript(`[${batch.join(',')}]`)}</script>`,
    )
    batch = []
    size = 0
  }
  for (const card of cards) {
    const json = cardJson(card)
    if (size > 0 && size + json.length > BLOCK_BYTES) flush()
    batch.push(json)
    size += json.length
  }
  if (batch.length > 0) flush()
  return blocks.join('')
}

export function staticPageHtml(snapshot: SessionSnapshot, assets: ViewerAssets): string {
  const head: SessionSnapshot = { ...snapshot, cards: [] }
  assertInlineSafe(assets.js, 'script')
  assertInlineSafe(assets.css, 'style')
  const csp =
    `default-src 'none'; script-src ${sha256(assets.js)}; style-src ${sha256(assets.css)}; img-src data:; ` +
    "media-src data:; base-uri 'none'; form-action 'none'"
  return (
    `<!doctype html><html lang="en"><head>${HEAD}` +
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">` +
    `<title>${escapeHtml(snapshot.title)} · toolgate</title><style>${assets.css}</style></head>` +
    `<body><div id="app"></div><script type="application/json" id="${SESSION_DATA_ID}">${jsonForScript(head)}</script>` +
    cardBlocks(snapshot.cards) +
    `<script>${assets.js}</script></body></html>\n`
  )
}
