// Rendering of the presentation cards (R-VIEW) a call's presenters produced. Every string from
// the session goes through `vis` into a text node; nothing is ever parsed as HTML.
import type { ComponentChildren } from 'preact'
import { useMemo } from 'preact/hooks'
import type {
  AudioContentBlock,
  ContentAnnotations,
  ContentBlock,
  EmbeddedResourceContentBlock,
  ResourceLinkContentBlock,
} from '../../contract/content.js'
import type { JsonValue } from '../../contract/json-value.js'
import type { ToolCallView, ToolResultView } from '../../contract/views.js'
import { base64Bytes, formatBytes } from '../../util/byte-size.js'
import type { DiffBlock } from '../model.js'
import { highlightLines, type Segment } from './highlight.js'
import { html } from './html.js'
import { JsonTree } from './json-tree.js'
import { audioDataUrl, downloadDataUrl, downloadName, imageDataUrl, linkHref, vis } from './text.js'

/** Lines rendered per block before the rest is folded away. */
const MAX_LINES = 400

function segments(line: Segment[]): ComponentChildren {
  return line.map((s) => (s.className === '' ? vis(s.text) : html`<span class=${s.className}>${vis(s.text)}</span>`))
}

/** Highlighted code, one row per line, optionally numbered. */
export function Code(props: { code: string; lang?: string | null; numbers?: number[]; className?: string }) {
  const lines = useMemo(() => highlightLines(props.code, props.lang), [props.code, props.lang])
  const shown = lines.slice(0, MAX_LINES)
  return html`<div class=${`code hljs ${props.className ?? ''}`}>
    ${shown.map(
      (line, i) =>
        html`<div class="code-line">${
          props.numbers !== undefined ? html`<span class="ln">${props.numbers[i] ?? ''}</span>` : null
        }<code>${segments(line)}</code></div>`,
    )}
    ${lines.length > MAX_LINES ? html`<div class="more">… ${lines.length - MAX_LINES} more lines</div>` : null}
  </div>`
}

function parseJsonText(text: string): JsonValue | undefined {
  const t = text.trim()
  if (t.length < 2 || (t[0] !== '{' && t[0] !== '[')) return undefined
  try {
    return JSON.parse(t) as JsonValue
  } catch {
    return undefined
  }
}

/** Plain text, a JSON text as a folded tree. */
function TextBlock(props: { text: string }) {
  const json = useMemo(() => parseJsonText(props.text), [props.text])
  if (json !== undefined) return html`<div class="json">${html`<${JsonTree} value=${json} />`}</div>`
  const lines = props.text.split('\n')
  const shown =
    lines.length > MAX_LINES
      ? `${lines.slice(0, MAX_LINES).join('\n')}\n… ${lines.length - MAX_LINES} more lines`
      : props.text
  return html`<pre class="text">${vis(shown)}</pre>`
}

function sizeLabel(bytes: number | undefined): string | null {
  return bytes === undefined ? null : formatBytes(bytes)
}

/** Type and size, for a block whose bytes are not shown. */
function Facts(props: { parts: Array<string | null | undefined> }) {
  const parts = props.parts.filter((p): p is string => p !== undefined && p !== null && p !== '')
  return parts.length === 0 ? null : html`<span class="note facts">${vis(parts.join(' · '))}</span>`
}

function AudioBlock(props: { block: AudioContentBlock }) {
  const b = props.block
  const src = audioDataUrl(b.mediaType, b.data)
  return html`<div class="audio">
    ${src === undefined ? html`<span class="note">[audio not playable]</span> ` : html`<audio controls preload="metadata" src=${src}></audio>`}
    <${Facts} parts=${[b.mediaType, formatBytes(base64Bytes(b.data))]} />
  </div>`
}

function LinkBlock(props: { block: ResourceLinkContentBlock }) {
  const b = props.block
  const href = linkHref(b.uri)
  const label = b.title ?? b.name
  return html`<div class="resource-link">
    ${
      href === undefined
        ? html`<span class="link-text">${vis(label)}</span> <span class="uri">${vis(b.uri)}</span>`
        : html`<a class="link" href=${href} target="_blank" rel="noopener noreferrer" title=${vis(b.uri)}>${vis(label)}</a>`
    }
    <${Facts} parts=${[b.mediaType, sizeLabel(b.size)]} />
    ${b.description !== undefined ? html`<div class="description">${vis(b.description)}</div>` : null}
  </div>`
}

function ResourceBlock(props: { block: EmbeddedResourceContentBlock }) {
  const r = props.block.resource
  if ('text' in r) {
    return html`<div class="resource">
      <div class="resource-head"><span class="uri">${vis(r.uri)}</span> <${Facts} parts=${[r.mediaType]} /></div>
      <${TextBlock} text=${r.text} />
    </div>`
  }
  const href = downloadDataUrl(r.blob)
  const image = r.mediaType === undefined ? undefined : imageDataUrl(r.mediaType, r.blob)
  return html`<div class="resource blob">
    <div class="resource-head">
      <span class="uri">${vis(r.uri)}</span>
      <${Facts} parts=${[r.mediaType ?? 'binary', formatBytes(base64Bytes(r.blob))]} />
      ${href !== undefined ? html` <a class="download" href=${href} download=${downloadName(r.uri)}>download</a>` : null}
    </div>
    ${image !== undefined ? html`<img class="image" src=${image} alt=${`image (${r.mediaType})`} />` : null}
  </div>`
}

/** Who a block is for and how much it matters, when the tool said so. */
function Annotations(props: { annotations: ContentAnnotations | undefined }) {
  const a = props.annotations
  if (a === undefined) return null
  const parts: string[] = []
  if (a.audience !== undefined && a.audience.length > 0) parts.push(`for ${a.audience.join(', ')}`)
  if (a.priority !== undefined) parts.push(`priority ${a.priority}`)
  if (a.lastModified !== undefined) parts.push(`modified ${a.lastModified}`)
  return parts.length === 0 ? null : html`<div class="note annotations">${vis(parts.join(' · '))}</div>`
}

function Block(props: { block: ContentBlock }) {
  const b = props.block
  switch (b.type) {
    case 'text':
      return html`<${TextBlock} text=${b.text} />`
    case 'image': {
      const src = imageDataUrl(b.mediaType, b.data)
      return src === undefined
        ? html`<div class="image-missing">[image of type ${vis(b.mediaType)} not shown]</div>`
        : html`<img class="image" src=${src} alt=${`image (${b.mediaType})`} />`
    }
    case 'audio':
      return html`<${AudioBlock} block=${b} />`
    case 'resource-link':
      return html`<${LinkBlock} block=${b} />`
    case 'resource':
      return html`<${ResourceBlock} block=${b} />`
    default:
      return null
  }
}

/** Model-facing content blocks: text (JSON folded), images, audio, resource links and embedded resources. */
export function Content(props: { blocks: readonly ContentBlock[] | undefined }) {
  const blocks = props.blocks ?? []
  return html`${blocks.map((b, i) =>
    b.annotations === undefined
      ? html`<${Block} key=${i} block=${b} />`
      : html`<div key=${i} class="annotated"><${Block} block=${b} /><${Annotations} annotations=${b.annotations} /></div>`,
  )}`
}

function Diffs(props: { diffs: DiffBlock[] }) {
  let lastPath: string | undefined
  return html`<div class="diffs">
    ${props.diffs.map((d, i) => {
      const head =
        d.path !== lastPath
          ? html`<div class="diff-path">${vis(d.path)}${d.isNew ? html` <span class="note">(new file)</span>` : null}</div>`
          : html`<div class="diff-gap">⋯</div>`
      lastPath = d.path
      return html`<div class="diff" key=${i}>${head}<${DiffLines} block=${d} /></div>`
    })}
  </div>`
}

const SIGN = { add: '+', del: '-', ctx: ' ' } as const

function DiffLines(props: { block: DiffBlock }) {
  const { block } = props
  const code = useMemo(() => block.lines.map((l) => l.text).join('\n'), [block])
  const lines = useMemo(() => highlightLines(code, block.lang), [code, block.lang])
  const shown = block.lines.slice(0, MAX_LINES)
  return html`<div class="code hljs">
    ${shown.map(
      (l, i) =>
        html`<div class=${`diff-line ${l.tag}`}><span class="sign">${SIGN[l.tag]}</span><code>${segments(
          lines[i] ?? [],
        )}</code></div>`,
    )}
    ${block.lines.length > MAX_LINES ? html`<div class="more">… ${block.lines.length - MAX_LINES} more lines</div>` : null}
  </div>`
}

function exitBadge(exitCode: number | undefined, signal: string | undefined): ComponentChildren {
  if (signal !== undefined && signal !== '') return html`<span class="exit bad">killed by ${vis(signal)}</span>`
  if (exitCode === undefined) return null
  return html`<span class=${`exit ${exitCode === 0 ? 'good' : 'bad'}`}>exit ${exitCode}</span>`
}

function countNote(shown: number, total: number, truncated: boolean, nouns: [string, string]): ComponentChildren {
  const noun = total === 1 ? nouns[0] : nouns[1]
  return html`<div class=${`note ${truncated ? 'warn' : ''}`}>${total} ${noun}${
    truncated ? ` (truncated: showing ${shown})` : ''
  }</div>`
}

/** The completed card. */
export function ResultView(props: { view: ToolResultView; diffs: DiffBlock[] }) {
  const v = props.view
  switch (v.card) {
    case 'generic':
      return html`<${Content} blocks=${v.content} />`
    case 'terminal':
      return html`<div class="terminal">
        ${v.output !== undefined && v.output !== '' ? html`<pre class="output">${vis(v.output)}</pre>` : null}
        ${exitBadge(v.exitCode, v.signal)}
      </div>`
    case 'diff':
      return html`<${Diffs} diffs=${props.diffs} />`
    case 'search':
      if (v.shape === 'paths') {
        return html`<div class="search">
          <ul class="paths">${v.paths.map((p) => html`<li>${vis(p)}</li>`)}</ul>
          ${countNote(v.paths.length, v.total, v.truncated, ['path', 'paths'])}
        </div>`
      }
      return html`<div class="search">
        ${v.files.map(
          (f) => html`<section class="search-file">
            <div class="search-path">${vis(f.path)}</div>
            <${Code}
              code=${f.matches.map((m) => m.text).join('\n')}
              numbers=${f.matches.map((m) => m.line)}
              lang=${null}
            />
          </section>`,
        )}
        ${countNote(
          v.files.reduce((n, f) => n + f.matches.length, 0),
          v.total,
          v.truncated,
          ['match', 'matches'],
        )}
      </div>`
    case 'read': {
      const first = v.lines[0]?.number
      const last = v.lines[v.lines.length - 1]?.number
      return html`<div class="read">
        <div class="read-head">${vis(v.path)}
          <span class="note">${
            v.lines.length === 0 ? `no lines at offset ${v.offset}` : `lines ${first}–${last}`
          } of ${v.totalLines}</span></div>
        ${
          v.lines.length > 0
            ? html`<${Code}
                code=${v.lines.map((l) => l.text).join('\n')}
                numbers=${v.lines.map((l) => l.number)}
                lang=${v.lang ?? null}
              />`
            : null
        }
        ${v.content !== undefined && v.lines.length === 0 ? html`<pre class="text">${vis(v.content)}</pre>` : null}
      </div>`
    }
    case 'web':
      if (v.kind === 'fetch') {
        return html`<div class="web">
          <span class="url">${vis(v.url)}</span> → <span class="status-code">${v.statusCode}</span>
          ${v.truncated ? html`<div class="note warn">(body truncated)</div>` : null}
        </div>`
      }
      return html`<div class="web">
        ${v.answer !== undefined ? html`<pre class="text">${vis(v.answer)}</pre>` : null}
        <ul class="sources">
          ${v.sources.map(
            (s) => html`<li>
              ${s.title !== undefined ? html`<span class="source-title">${vis(s.title)}</span> — ` : null}
              <span class="url">${vis(s.url)}</span>
              ${s.snippet !== undefined ? html`<div class="snippet">${vis(s.snippet)}</div>` : null}
            </li>`,
          )}
        </ul>
        ${v.truncated ? html`<div class="note warn">(results truncated)</div>` : null}
      </div>`
    default:
      return html`<${JsonTree} value=${v as unknown as JsonValue} />`
  }
}

/** The pending card (shown until the call settles). */
export function CallView(props: { view: ToolCallView; diffs: DiffBlock[] }) {
  const v = props.view
  switch (v.card) {
    case 'generic':
      return html`<div class="generic">
        ${v.locations?.map((l) => html`<div class="location">→ ${vis(l.path)}${l.line !== undefined ? `:${l.line}` : ''}</div>`)}
        ${v.content !== undefined ? html`<${Content} blocks=${v.content} />` : null}
      </div>`
    case 'terminal':
      return html`<div class="terminal">
        ${v.description !== undefined ? html`<${Code} code=${v.description} lang="bash" />` : null}
        ${v.cwd !== undefined ? html`<div class="note">in ${vis(v.cwd)}</div>` : null}
      </div>`
    case 'diff':
      return html`<${Diffs} diffs=${props.diffs} />`
    default:
      return html`<${JsonTree} value=${v as unknown as JsonValue} />`
  }
}
