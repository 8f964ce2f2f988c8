import type { Context } from 'cordis'
import type { ContentBlock } from '../contract/content.js'
import { ConfigError } from '../errors/config-error.js'
import { directListener } from '../runtime/index.js'

/** Config of {@link ResultBudget}. */
export interface ResultBudgetConfig {
  /** Bytes of content the model may see of one result (UTF-8 text plus image data); default 32 KiB. */
  readonly maxBytes?: number
  /** Per-tool budgets by tool name; they replace `maxBytes` for that tool. */
  readonly perTool?: Readonly<Record<string, number>>
}

/** The default budget: 32 KiB of model-visible content per result. */
export const DEFAULT_RESULT_BUDGET_BYTES = 32 * 1024

/** Room kept for the marker itself, so a capped result stays within its budget. */
const MARKER_RESERVE = 320

/**
 * Caps what the model sees of any result (the content), keeping its head and tail with a marker
 * between them that says how much was cut and where the whole value lives (the journal record of
 * the call). Text counts its UTF-8 bytes, an image its data's size; an image never is cut in
 * part: one that does not fit is left out and counted in the marker.
 *
 * It works through the last-mile content seams only: `tools/finalize-content` for model-direct
 * calls (so `value`, `error` and `meta` stay whole for the program, the journal and UIs), and
 * `tools/code-dispatch-log` for the durable log copy of a Code Mode sub-call — the program still
 * receives the sub-call's full value, and the sub-call's own result (journalled in full) is what
 * the marker points to.
 *
 * Usage: `ctx.plugin(ResultBudget, { maxBytes: 32 * 1024, perTool: { bash: 16 * 1024 } })`.
 */
export class ResultBudget {
  readonly maxBytes: number
  readonly perTool: ReadonlyMap<string, number>

  constructor(ctx: Context, config: ResultBudgetConfig = {}) {
    const checked = validateConfig(config)
    this.maxBytes = checked.maxBytes
    this.perTool = checked.perTool
    ctx.on(
      'tools/finalize-content',
      directListener((exec, result) => {
        // A sub-call's content reaches only the program's log; its budget applies to that copy below.
        if (exec.parent !== undefined) return undefined
        return capContent(result.content, this.budgetOf(exec.name), exec.callId)
      }),
    )
    ctx.on('tools/code-dispatch-log', async (dispatch, next) => {
      const content = await next()
      return capContent(content, this.budgetOf(dispatch.name), dispatch.subCallId) ?? content
    })
  }

  /** The budget of one tool: its per-tool entry, else `maxBytes`. */
  budgetOf(name: string): number {
    return this.perTool.get(name) ?? this.maxBytes
  }
}

/** Size of one block as the budget counts it. */
function blockBytes(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
      return Buffer.byteLength(block.text, 'utf8')
    case 'image':
    case 'audio':
      return block.data.length
    case 'resource-link':
      return Buffer.byteLength(block.uri, 'utf8') + Buffer.byteLength(block.name, 'utf8')
    case 'resource':
      return 'text' in block.resource ? Buffer.byteLength(block.resource.text, 'utf8') : block.resource.blob.length
  }
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes, cut on a character boundary. */
function headText(text: string, bytes: number): string {
  if (bytes <= 0) return ''
  const encoded = Buffer.from(text.slice(0, bytes), 'utf8')
  if (encoded.length <= bytes) return encoded.toString('utf8')
  let end = bytes
  while (end > 0 && (encoded[end] & 0xc0) === 0x80) end--
  return encoded.subarray(0, end).toString('utf8')
}

/** The longest suffix of `text` within `bytes` UTF-8 bytes, cut on a character boundary. */
function tailText(text: string, bytes: number): string {
  if (bytes <= 0) return ''
  const encoded = Buffer.from(text.slice(-bytes), 'utf8')
  if (encoded.length <= bytes) return encoded.toString('utf8')
  let start = encoded.length - bytes
  while (start < encoded.length && (encoded[start] & 0xc0) === 0x80) start++
  return encoded.subarray(start).toString('utf8')
}

const count = (n: number): string => n.toLocaleString('en-US')

/**
 * Cap `content` to `budget` bytes: `undefined` when it already fits, else the head and the tail
 * (half the budget each, less room for the marker) around one marker text. Whole blocks are kept
 * while they fit; the block at each edge of the cut is shortened if it is text, left out if it
 * is an image. When the cut falls inside one text block, head, marker and tail stay one block.
 */
export function capContent(
  content: readonly ContentBlock[],
  budget: number,
  callId: string,
): ContentBlock[] | undefined {
  const sizes = content.map(blockBytes)
  const total = sizes.reduce((sum, n) => sum + n, 0)
  if (total <= budget) return undefined
  const shownId = callId.length > 200 ? `${callId.slice(0, 200)}…` : callId
  const room = Math.max(0, budget - MARKER_RESERVE - Buffer.byteLength(shownId, 'utf8'))
  const headRoom = Math.ceil(room / 2)
  const tailRoom = room - headRoom

  const head: ContentBlock[] = []
  let used = 0
  let i = 0
  let headCutText: string | undefined
  for (; i < content.length; i++) {
    const block = content[i]
    if (used + sizes[i] <= headRoom) {
      head.push(block)
      used += sizes[i]
      continue
    }
    if (block.type === 'text') headCutText = headText(block.text, headRoom - used)
    break
  }
  const tail: ContentBlock[] = []
  let tailUsed = 0
  let j = content.length - 1
  let tailCutText: string | undefined
  for (; j > i; j--) {
    const block = content[j]
    if (tailUsed + sizes[j] <= tailRoom) {
      tail.unshift(block)
      tailUsed += sizes[j]
      continue
    }
    if (block.type === 'text') tailCutText = tailText(block.text, tailRoom - tailUsed)
    break
  }
  // One text block holds the whole cut: its own head and tail.
  const sameBlock = i === j && content[i]?.type === 'text'
  if (sameBlock) tailCutText = tailText((content[i] as { text: string }).text, tailRoom - tailUsed)

  const keptBytes =
    used +
    tailUsed +
    (headCutText === undefined ? 0 : Buffer.byteLength(headCutText, 'utf8')) +
    (tailCutText === undefined ? 0 : Buffer.byteLength(tailCutText, 'utf8'))
  let imagesLeftOut = 0
  let othersLeftOut = 0
  let blockBytesLeftOut = 0
  for (let k = i; k <= j; k++) {
    const block = content[k]
    if (block === undefined || block.type === 'text') continue
    if (block.type === 'image') imagesLeftOut++
    else othersLeftOut++
    blockBytesLeftOut += sizes[k]
  }
  const leftOut = [
    imagesLeftOut === 0 ? '' : `${imagesLeftOut} image${imagesLeftOut === 1 ? '' : 's'}`,
    othersLeftOut === 0 ? '' : `${othersLeftOut} other non-text block${othersLeftOut === 1 ? '' : 's'}`,
  ]
    .filter((part) => part !== '')
    .join(' and ')
  const images = leftOut === '' ? '' : ` (including ${leftOut} of ${count(blockBytesLeftOut)} bytes)`
  const marker =
    `[… ${count(total - keptBytes)} of ${count(total)} bytes cut from the middle of this result${images}; ` +
    `the full result is in the journal record for call ${shownId} …]`

  const out: ContentBlock[] = [...head]
  if (sameBlock) {
    out.push({ type: 'text', text: `${headCutText ?? ''}\n${marker}\n${tailCutText ?? ''}` })
  } else {
    if (headCutText) out.push({ type: 'text', text: headCutText })
    out.push({ type: 'text', text: marker })
    if (tailCutText) out.push({ type: 'text', text: tailCutText })
  }
  out.push(...tail)
  return out
}

function validateConfig(config: ResultBudgetConfig | undefined): {
  maxBytes: number
  perTool: ReadonlyMap<string, number>
} {
  if (config === undefined || config === null) return { maxBytes: DEFAULT_RESULT_BUDGET_BYTES, perTool: new Map() }
  if (typeof config !== 'object') throw new ConfigError('ResultBudget config', 'expected an object')
  const bytes = (value: unknown, path: string): number => {
    if (!Number.isSafeInteger(value) || (value as number) < 1024) {
      throw new ConfigError(`ResultBudget ${path}`, `expected an integer number of bytes >= 1024, got ${String(value)}`)
    }
    return value as number
  }
  const maxBytes =
    config.maxBytes === undefined ? DEFAULT_RESULT_BUDGET_BYTES : bytes(config.maxBytes, 'config.maxBytes')
  const perTool = new Map<string, number>()
  if (config.perTool !== undefined) {
    if (typeof config.perTool !== 'object' || config.perTool === null || Array.isArray(config.perTool)) {
      throw new ConfigError('ResultBudget config.perTool', 'expected an object of tool name → bytes')
    }
    for (const [name, value] of Object.entries(config.perTool)) {
      perTool.set(name, bytes(value, `config.perTool[${JSON.stringify(name)}]`))
    }
  }
  return { maxBytes, perTool }
}
