// The format registry and the three format-generic entry points.
import type { ToolSchema } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { anthropicFormat } from './anthropic.js'
import type { FormatModule } from './format-module.js'
import { geminiFormat } from './gemini.js'
import { openAIChatFormat } from './openai-chat.js'
import { openAIResponsesFormat } from './openai-responses.js'
import { nullAbsentSchemas } from './tool-calls.js'
import { projectTools } from './tool-search.js'
import type {
  ParseToolCallsOptions,
  ProviderBatch,
  ProviderFormat,
  ProviderMessage,
  ProviderResponse,
  ProviderToolCall,
  ProviderTools,
  ProviderToolsOptions,
} from './types.js'

const FORMATS: { readonly [F in ProviderFormat]: FormatModule<F> } = {
  'openai-chat': openAIChatFormat,
  'openai-responses': openAIResponsesFormat,
  anthropic: anthropicFormat,
  gemini: geminiFormat,
}

/** The names `toProviderTools` & co. accept. */
export const PROVIDER_FORMATS: readonly ProviderFormat[] = Object.freeze(Object.keys(FORMATS) as ProviderFormat[])

export function formatModule<F extends ProviderFormat>(format: F, where: string): FormatModule<F> {
  const module = typeof format === 'string' && Object.hasOwn(FORMATS, format) ? FORMATS[format] : undefined
  if (module === undefined) {
    throw new ConfigError(
      where,
      `expected one of ${PROVIDER_FORMATS.map((f) => `'${f}'`).join(', ')}; got ${JSON.stringify(format)}`,
    )
  }
  return module as FormatModule<F>
}

/**
 * The `tools` array entries of a request for `format`, from `ctx.tools.schemas(scope)`. With
 * `strict: true` OpenAI tools go out in strict mode where expressible; `downgrades` lists,
 * path-qualified, everything a provider cannot express (such a tool is then sent non-strict).
 * With `toolSearch: 'native'` and the `deferred` schemas, a provider with a tool search of its own
 * (Anthropic, OpenAI Responses) gets it instead of toolgate's `search_tools`; `toolSearch` in the
 * answer, and a `tool search:` line in `downgrades`, say which search the request carries.
 */
export function toProviderTools<F extends ProviderFormat>(
  format: F,
  schemas: readonly ToolSchema[],
  options: ProviderToolsOptions = {},
): ProviderTools<F> {
  const module = formatModule(format, 'toProviderTools(format)')
  checkSchemas(schemas, 'toProviderTools(format, schemas)')
  if (options === null || typeof options !== 'object')
    throw new ConfigError('toProviderTools(format, schemas, options)', 'expected an object')
  if (options.deferred !== undefined)
    checkSchemas(options.deferred, 'toProviderTools(format, schemas, options).deferred')
  return projectTools(format, module, schemas, options, 'toProviderTools(format, schemas, options)')
}

/**
 * The tool calls of one provider response, in the order the model emitted them. Argument text
 * is parsed here; malformed JSON is kept as `argumentsError` (the call then executes to
 * `INVALID_ARGS`). Pass the request's `schemas` and `strict` to turn strict-mode `null`s for
 * optional properties back into absent keys.
 */
export function parseToolCalls<F extends ProviderFormat>(
  format: F,
  response: ProviderResponse<F>,
  options?: ParseToolCallsOptions,
): ProviderToolCall[] {
  const module = formatModule(format, 'parseToolCalls(format)')
  if (options?.schemas !== undefined) checkSchemas(options.schemas, 'parseToolCalls(format, response, options).schemas')
  return module.parseToolCalls(response, nullAbsentSchemas(options, module.hasStrictMode))
}

/**
 * The messages to append after one executed batch: exactly one tool result per call, in call
 * order, whatever happened to it; errors marked the provider's way; images carried natively
 * where the API allows, else in a following user message; deferred user messages last.
 */
export function toProviderMessages<F extends ProviderFormat>(format: F, batch: ProviderBatch): ProviderMessage<F>[] {
  const module = formatModule(format, 'toProviderMessages(format)')
  if (batch === null || typeof batch !== 'object' || !Array.isArray(batch.results)) {
    throw new ConfigError(
      'toProviderMessages(format, batch).results',
      'expected an array (pass what executeBatch returned)',
    )
  }
  batch.results.forEach((entry, i) => {
    if (typeof entry?.call?.callId !== 'string' || typeof entry.call.name !== 'string')
      throw new ConfigError(`toProviderMessages(format, batch).results[${i}].call`, 'expected a string callId and name')
    if (entry.result === null || typeof entry.result !== 'object' || !Array.isArray(entry.result.content))
      throw new ConfigError(`toProviderMessages(format, batch).results[${i}].result`, 'expected a ToolExecutionResult')
  })
  return module.toMessages(batch)
}

export function checkSchemas(schemas: readonly ToolSchema[], where: string): void {
  if (!Array.isArray(schemas)) throw new ConfigError(where, 'expected an array (pass ctx.tools.schemas(scope))')
  schemas.forEach((schema, i) => {
    if (schema === null || typeof schema !== 'object') throw new ConfigError(`${where}[${i}]`, 'expected an object')
    if (typeof schema.name !== 'string' || schema.name === '')
      throw new ConfigError(`${where}[${i}].name`, 'expected a non-empty string')
    if (typeof schema.description !== 'string') throw new ConfigError(`${where}[${i}].description`, 'expected a string')
  })
}
