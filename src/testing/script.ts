// The script both test doubles follow: what the model says in each turn.
import type { JsonValue } from '../contract/json-value.js'
import { ConfigError } from '../errors/config-error.js'

/** One tool call a scripted turn makes. */
export interface ScriptedToolCall {
  readonly name: string
  /** The arguments: a JSON value, or raw text sent as is (malformed JSON included, to test repair). */
  readonly arguments?: JsonValue
  /** The call id; made up (unique per turn and call) when absent. Gemini sends none unless given. */
  readonly id?: string
}

/** The tokens a scripted turn reports (default 10 in, 5 out). */
export interface ScriptedUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  /** A part of `outputTokens`. */
  readonly reasoningTokens?: number
  /** A part of `inputTokens`. */
  readonly cachedInputTokens?: number
}

/** One model turn: text, reasoning, tool calls, usage. A bare string is a turn with that text only. */
export interface ScriptedTurnObject {
  readonly text?: string
  /** Sent as the provider sends reasoning (Responses: a reasoning summary; Anthropic: thinking; Gemini: a thought part). */
  readonly reasoning?: string
  readonly toolCalls?: readonly ScriptedToolCall[]
  /**
   * The model first runs the provider's own tool search with this query (fake provider, Anthropic and
   * OpenAI Responses only): the fake searches the request's `defer_loading` tools server-side and puts
   * the search and its matches in the reply, in the API's shapes, before the text and the calls.
   */
  readonly toolSearch?: string
  /** Anthropic only: the API paused the turn (`stop_reason: 'pause_turn'`); the client sends it back to go on. */
  readonly pause?: boolean
  readonly usage?: ScriptedUsage
  /** Streaming only: send the turn's pieces, then keep the response open until the client goes away (for abort tests). */
  readonly hang?: boolean
  /** Answer with this HTTP error (in the provider's error shape) instead of a reply. */
  readonly error?: { readonly status: number; readonly message: string }
}

export type ScriptedTurn = string | ScriptedTurnObject

/** A turn with its defaults filled in and its position in the script. */
export interface Turn {
  readonly n: number
  readonly text: string
  readonly reasoning: string
  readonly calls: readonly { readonly id: string | undefined; readonly name: string; readonly args: string }[]
  readonly toolSearch?: string
  readonly pause: boolean
  readonly usage: ScriptedUsage
  readonly hang: boolean
  readonly error?: { readonly status: number; readonly message: string }
}

/** Check a script once, up front, so a typo fails where it is written. */
export function checkTurns(turns: unknown, where: string): readonly ScriptedTurn[] {
  if (!Array.isArray(turns)) throw new ConfigError(where, 'expected an array of turns')
  turns.forEach((turn, i) => {
    if (typeof turn === 'string') return
    const at = `${where}[${i}]`
    if (turn === null || typeof turn !== 'object') throw new ConfigError(at, 'expected a string or an object')
    const { text, reasoning, toolCalls, usage, error, toolSearch, pause } = turn as Record<string, unknown>
    if (pause !== undefined && typeof pause !== 'boolean') throw new ConfigError(`${at}.pause`, 'expected a boolean')
    if (text !== undefined && typeof text !== 'string') throw new ConfigError(`${at}.text`, 'expected a string')
    if (toolSearch !== undefined && (typeof toolSearch !== 'string' || toolSearch === ''))
      throw new ConfigError(`${at}.toolSearch`, 'expected a non-empty query string')
    if (reasoning !== undefined && typeof reasoning !== 'string')
      throw new ConfigError(`${at}.reasoning`, 'expected a string')
    if (toolCalls !== undefined) {
      if (!Array.isArray(toolCalls)) throw new ConfigError(`${at}.toolCalls`, 'expected an array')
      toolCalls.forEach((call, k) => {
        const name = (call as { name?: unknown } | null)?.name
        if (typeof name !== 'string' || name === '')
          throw new ConfigError(`${at}.toolCalls[${k}].name`, 'expected a non-empty string')
        const id = (call as { id?: unknown }).id
        if (id !== undefined && (typeof id !== 'string' || id === ''))
          throw new ConfigError(`${at}.toolCalls[${k}].id`, 'expected a non-empty string')
      })
    }
    if (usage !== undefined) {
      const counts = usage as Record<string, unknown> | null
      for (const key of ['inputTokens', 'outputTokens']) {
        const value = counts?.[key]
        if (!(Number.isSafeInteger(value) && (value as number) >= 0))
          throw new ConfigError(`${at}.usage.${key}`, 'expected a non-negative integer')
      }
    }
    if (error !== undefined) {
      const status = (error as { status?: unknown } | null)?.status
      if (!(Number.isSafeInteger(status) && (status as number) >= 400 && (status as number) <= 599))
        throw new ConfigError(`${at}.error.status`, 'expected an HTTP error status (400-599)')
    }
  })
  return turns as readonly ScriptedTurn[]
}

export function turnAt(turns: readonly ScriptedTurn[], n: number): Turn | undefined {
  const given = turns[n]
  if (given === undefined) return undefined
  const turn: ScriptedTurnObject = typeof given === 'string' ? { text: given } : given
  return {
    n,
    text: turn.text ?? '',
    reasoning: turn.reasoning ?? '',
    calls: (turn.toolCalls ?? []).map((call) => ({
      id: call.id,
      name: call.name,
      args: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
    })),
    ...(turn.toolSearch !== undefined ? { toolSearch: turn.toolSearch } : {}),
    pause: turn.pause === true,
    usage: turn.usage ?? { inputTokens: 10, outputTokens: 5 },
    hang: turn.hang === true,
    ...(turn.error !== undefined ? { error: turn.error } : {}),
  }
}

/** Text cut into word-sized pieces, as a model streams it. */
export function pieces(text: string, size = 0): string[] {
  if (text === '') return []
  if (size > 0) {
    const out: string[] = []
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
    return out
  }
  return text.match(/\S+\s*|\s+/g) ?? [text]
}
