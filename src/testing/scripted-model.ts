// scriptedModel: the SDK adapters over an in-memory client that answers from a script.
import { ConfigError } from '../errors/config-error.js'
import { anthropicModel } from '../providers/anthropic-model.js'
import { geminiModel } from '../providers/gemini-model.js'
import { PROVIDER_FORMATS, type ProviderFormat, type ProviderModel, type ToolSearchMode } from '../providers/index.js'
import { openAIChatModel } from '../providers/openai-chat-model.js'
import { openAIResponsesModel } from '../providers/openai-responses-model.js'
import { searchOfTurn } from './native-search.js'
import { checkTurns, type ScriptedTurn, type Turn, turnAt } from './script.js'
import { WIRE } from './wire.js'

export interface ScriptedModelOptions<F extends ProviderFormat = 'openai-chat'> {
  /** The format the conversation is in (default `'openai-chat'`). */
  readonly format?: F
  /** What the model says: request n (from 0) gets turn n. A request past the end fails. */
  readonly turns: readonly ScriptedTurn[]
  /** The adapter's `toolSearch` (Anthropic and OpenAI Responses; see `anthropicModel`). */
  readonly toolSearch?: ToolSearchMode
}

/** A scripted model and the requests it received. */
export type ScriptedModel<F extends ProviderFormat> = ProviderModel<F> & {
  /** Each request body as the adapter built it for the provider, in order. */
  readonly requests: readonly unknown[]
}

/**
 * A model that answers from a script of turns, without a network or an SDK: the format's real
 * adapter (`openAIChatModel`, …) over an in-memory client that returns what `startFakeProvider`
 * would send. It streams too (the same events), so it drives `streamModelLoop` as well.
 */
export function scriptedModel<F extends ProviderFormat = 'openai-chat'>(
  options: ScriptedModelOptions<F>,
): ScriptedModel<F> {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('scriptedModel(options)', 'expected an object')
  const format = (options.format ?? 'openai-chat') as F
  if (!PROVIDER_FORMATS.includes(format))
    throw new ConfigError(
      'scriptedModel(options).format',
      `expected one of ${PROVIDER_FORMATS.map((f) => `'${f}'`).join(', ')}; got ${JSON.stringify(format)}`,
    )
  const turns = [...checkTurns(options.turns, 'scriptedModel(options).turns')]
  const wire = WIRE[format]
  const requests: unknown[] = []
  let answered = 0
  const next = (): Turn => {
    const turn = turnAt(turns, answered++)
    if (turn === undefined)
      throw new Error(`scriptedModel (${format}): the script has ${turns.length} turns; request ${answered} has none`)
    if (turn.error !== undefined)
      throw new Error(`scriptedModel (${format}): ${turn.error.status} ${turn.error.message}`)
    return turn
  }
  const respond = async (body: Record<string, unknown>, stream: boolean, signal: AbortSignal | undefined) => {
    const { abortSignal: _, ...config } = (body.config ?? {}) as Record<string, unknown>
    requests.push(body.config === undefined ? body : { ...body, config })
    const turn = next()
    const found = searchOfTurn(format, body, turn.toolSearch)
    if (typeof found === 'string') throw new Error(`scriptedModel (${format}): 400 ${found}`)
    const model = String(body.model ?? 'scripted-model')
    if (!stream) return wire.reply(turn, model, found)
    const list = wire.events(turn, model, found)
    return events(turn.hang ? list.slice(0, -wire.tail) : list, turn.hang, signal)
  }
  type Options = { signal?: AbortSignal } | undefined
  const create = (body: Record<string, unknown>, opts: Options) => respond(body, body.stream === true, opts?.signal)
  const client = {
    chat: { completions: { create } },
    responses: { create },
    messages: { create },
    models: {
      generateContent: (params: Record<string, unknown>) => respond(params, false, undefined),
      generateContentStream: (params: Record<string, unknown>) =>
        respond(params, true, (params.config as { abortSignal?: AbortSignal } | undefined)?.abortSignal),
    },
  } as never
  const model = 'scripted-model'
  const adapters: { readonly [K in ProviderFormat]: () => ProviderModel<K> } = {
    'openai-chat': () => openAIChatModel({ client, model }),
    'openai-responses': () => openAIResponsesModel({ client, model, toolSearch: options.toolSearch }),
    anthropic: () => anthropicModel({ client, model, toolSearch: options.toolSearch }),
    gemini: () => geminiModel({ client, model }),
  }
  const adapter = adapters[format]() as ProviderModel<F>
  return Object.assign(adapter, { requests })
}

/** The events' payloads one by one; a hanging turn then waits for the signal, as a stalled network does. */
async function* events(
  list: readonly { data: unknown }[],
  hang: boolean,
  signal: AbortSignal | undefined,
): AsyncGenerator<unknown> {
  for (const { data } of list) {
    signal?.throwIfAborted()
    await Promise.resolve()
    yield JSON.parse(JSON.stringify(data))
  }
  if (!hang) return
  await new Promise<void>((resolve) => {
    if (signal === undefined || signal.aborted) return resolve()
    signal.addEventListener('abort', () => resolve(), { once: true })
  })
  signal?.throwIfAborted()
  // Without a signal a hanging turn can never end: it ends the stream instead.
}
