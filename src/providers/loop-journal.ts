// The model loop's side of the session journal: the turn's prompt, the model's text per step, the
// calls each step emitted and how they were scheduled, and the turn's end. The tool calls are
// journaled by `Journal` as before; these records tell the conversation around them.
import type { ToolExecutionMode } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { createFileStore } from '../journal/file-store.js'
import {
  JOURNAL_VERSION,
  MAX_MODEL_TEXT_CHARS,
  MAX_RECORDED_CALLS,
  type ModelJournalRecord,
  type ModelRecordBase,
  type RecordedText,
} from '../journal/records.js'
import type { Store } from '../journal/store.js'
import type { ModelLoopEvent, ModelLoopStopReason } from './model-loop.js'
import type { ProviderFormat, ProviderToolCall } from './types.js'
import type { TokenUsage } from './usage.js'

/** Where a loop journals its side of the conversation: a journal file, or a store. */
export interface LoopJournalTarget {
  readonly journal?: string
  readonly store?: Store
}

/** `journal`/`store` as given to a loop, checked; `where` names the options in errors. */
export function checkLoopJournal(options: LoopJournalTarget, where: string): void {
  const { journal, store } = options
  if (journal !== undefined && (typeof journal !== 'string' || journal === ''))
    throw new ConfigError(`${where}.journal`, 'expected the journal file path')
  if (store !== undefined && (store === null || typeof store !== 'object' || typeof store.append !== 'function'))
    throw new ConfigError(`${where}.store`, 'expected a Store (createFileStore, createPostgresStore)')
  if (journal !== undefined && store !== undefined)
    throw new ConfigError(`${where}.store`, 'give either journal (a file) or store, not both')
}

/** Text cut to the records' limit, without splitting a surrogate pair. */
export function recordedText(text: string): RecordedText {
  if (text.length <= MAX_MODEL_TEXT_CHARS) return { text }
  let end = MAX_MODEL_TEXT_CHARS
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return { text: text.slice(0, end), textChars: text.length }
}

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text'])

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The visible text of one message in any provider format: a string `content`, or the text parts
 * of `content` (OpenAI, Anthropic, AI SDK) or `parts` (Gemini). Reasoning, thinking, tool calls and
 * tool results are not text.
 */
function messageText(message: unknown): string {
  if (!isObject(message)) return ''
  if (typeof message.content === 'string') return message.content
  const parts = Array.isArray(message.content) ? message.content : Array.isArray(message.parts) ? message.parts : []
  const texts: string[] = []
  for (const part of parts) {
    if (typeof part === 'string') texts.push(part)
    else if (!isObject(part) || typeof part.text !== 'string' || part.thought === true) continue
    else if (part.type === undefined ? 'parts' in message : TEXT_PART_TYPES.has(String(part.type)))
      texts.push(part.text)
  }
  return texts.join('\n')
}

/** The user's prompt of a turn: the text of the user messages the conversation ends with. */
export function promptOf(messages: readonly unknown[]): string {
  const texts: string[] = []
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (!isObject(message) || message.role !== 'user') break
    const text = messageText(message)
    if (text !== '') texts.unshift(text)
  }
  return texts.join('\n\n')
}

/** The model's text in one step's reply messages. */
export function replyText(messages: readonly unknown[]): string {
  return messages
    .map((m) => messageText(m))
    .filter((t) => t !== '')
    .join('\n\n')
}

/** A usage as the records keep it (a plain copy). */
function usageRecord(usage: TokenUsage): TokenUsage {
  return JSON.parse(JSON.stringify(usage)) as TokenUsage
}

/**
 * Records one loop run (one turn) into the journal. Writes never reach the loop: a record that
 * cannot be appended is reported as a process warning and the turn goes on.
 */
export class LoopJournal {
  readonly turnId = `turn-${globalThis.crypto.randomUUID()}`
  private readonly pending = new Set<Promise<void>>()
  private warned = false
  /** Per step: the calls that started, with their scheduling mode, by position in the batch. */
  private readonly started = new Map<number, Map<number, { callId: string; mode: ToolExecutionMode }>>()

  private constructor(
    private readonly store: Store,
    private readonly where: string,
    private readonly agentId: string | null,
  ) {}

  /** A recorder for `options`, or undefined when the loop has no journal. */
  static of(options: LoopJournalTarget & { agent?: { id: string } }): LoopJournal | undefined {
    if (options.store !== undefined) return new LoopJournal(options.store, 'the store', options.agent?.id ?? null)
    if (options.journal === undefined) return undefined
    return new LoopJournal(createFileStore({ journal: options.journal }), options.journal, options.agent?.id ?? null)
  }

  turnStarted(format: ProviderFormat, messages: readonly unknown[], resumed: boolean): void {
    this.write({
      ...this.base('turn-started'),
      format,
      resumed,
      ...recordedText(resumed ? '' : promptOf(messages)),
    })
  }

  /** Follow the loop's events: replies, call starts (their scheduling) and step ends. */
  observe<F extends ProviderFormat>(event: ModelLoopEvent<F>): void {
    switch (event.type) {
      case 'model-response': {
        const calls = event.calls.slice(0, MAX_RECORDED_CALLS).map((call: ProviderToolCall) => ({
          callId: String(call.callId),
          name: String(call.name),
        }))
        this.write({
          ...this.base('model-reply'),
          step: event.step,
          ...recordedText(replyText(event.messages)),
          calls,
          ...(event.calls.length > MAX_RECORDED_CALLS ? { callCount: event.calls.length } : {}),
        })
        return
      }
      case 'tool-start': {
        const step = this.started.get(event.step) ?? new Map()
        this.started.set(event.step, step)
        step.set(event.index, { callId: String(event.call.callId), mode: event.mode })
        return
      }
      case 'step-end': {
        const ran = this.started.get(event.step)
        this.started.delete(event.step)
        this.write({
          ...this.base('step-ended'),
          step: event.step,
          ...(event.usage !== undefined ? { usage: usageRecord(event.usage) } : {}),
          groups: ran === undefined ? [] : groupsOf(ran),
        })
        return
      }
    }
  }

  /** The turn ended: how, and the tokens it used. */
  turnEnded(stopReason: ModelLoopStopReason | 'error', usage: TokenUsage): void {
    this.write({ ...this.base('turn-ended'), stopReason, usage: usageRecord(usage) })
  }

  /** Resolves once every record written so far was appended (or failed and was reported). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending)
  }

  private base<T extends ModelJournalRecord['type']>(type: T): ModelRecordBase & { type: T } {
    return {
      v: JOURNAL_VERSION,
      type,
      ts: Date.now(),
      callId: this.turnId,
      rootCallId: this.turnId,
      parentCallId: null,
      agentId: this.agentId,
      toolName: '',
      turnId: this.turnId,
    }
  }

  /** Append in order (a store keeps the order of its appends; a file append is written at once). */
  private write(record: ModelJournalRecord): void {
    let appended: Promise<void>
    try {
      appended = this.store.append([record])
    } catch (error) {
      appended = Promise.reject(error)
    }
    const settled = appended.then(
      () => {
        this.pending.delete(settled)
      },
      (error: unknown) => {
        this.pending.delete(settled)
        // Once per turn: a journal that cannot be written fails every record alike.
        if (this.warned) return
        this.warned = true
        process.emitWarning(
          `toolgate model loop: could not append a ${record.type} record to ${this.where} (the turn goes on; ` +
            `its records may be missing): ${error instanceof Error ? error.message : String(error)}`,
        )
      },
    )
    this.pending.add(settled)
  }
}

/**
 * The scheduler's groups, from the calls that started: in call order, a run of parallel calls is
 * one group (they share the parallel pool), an exclusive call is a group of its own.
 */
function groupsOf(ran: ReadonlyMap<number, { callId: string; mode: ToolExecutionMode }>): string[][] {
  const groups: string[][] = []
  let parallel: string[] | undefined
  for (const index of [...ran.keys()].sort((a, b) => a - b)) {
    const { callId, mode } = ran.get(index)!
    if (mode.kind === 'parallel') {
      if (parallel === undefined) {
        parallel = []
        groups.push(parallel)
      }
      parallel.push(callId)
    } else {
      parallel = undefined
      groups.push([callId])
    }
  }
  return groups
}
