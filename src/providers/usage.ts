// Token usage: each provider's counters read into one shape, and summed over a loop.
import type { ProviderFormat } from './types.js'

/**
 * The tokens one model request used (or a loop's sum). `inputTokens` counts every prompt token,
 * cached ones included; `outputTokens` counts every generated token, reasoning included.
 */
export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
  /** Prompt tokens served from the provider's cache (a part of `inputTokens`), when it says. */
  readonly cachedInputTokens?: number
  /** Reasoning/thinking tokens (a part of `outputTokens`), when the provider says. */
  readonly reasoningTokens?: number
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined
}

function usage(input: number, output: number, total?: number, cached?: number, reasoning?: number): TokenUsage {
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: total ?? input + output,
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  }
}

/** The usage a response (or, for Gemini, its `usageMetadata`) reports, or undefined when it has none. */
export function usageOf(format: ProviderFormat, response: unknown): TokenUsage | undefined {
  switch (format) {
    case 'openai-chat': {
      const raw = field(response, 'usage')
      const input = count(field(raw, 'prompt_tokens'))
      const output = count(field(raw, 'completion_tokens'))
      if (input === undefined || output === undefined) return undefined
      return usage(
        input,
        output,
        count(field(raw, 'total_tokens')),
        count(field(field(raw, 'prompt_tokens_details'), 'cached_tokens')),
        count(field(field(raw, 'completion_tokens_details'), 'reasoning_tokens')),
      )
    }
    case 'openai-responses': {
      const raw = field(response, 'usage')
      const input = count(field(raw, 'input_tokens'))
      const output = count(field(raw, 'output_tokens'))
      if (input === undefined || output === undefined) return undefined
      return usage(
        input,
        output,
        count(field(raw, 'total_tokens')),
        count(field(field(raw, 'input_tokens_details'), 'cached_tokens')),
        count(field(field(raw, 'output_tokens_details'), 'reasoning_tokens')),
      )
    }
    case 'anthropic': {
      // Anthropic counts cache reads and cache writes apart from input_tokens: they are prompt tokens too.
      const raw = field(response, 'usage')
      const input = count(field(raw, 'input_tokens'))
      const output = count(field(raw, 'output_tokens'))
      if (input === undefined || output === undefined) return undefined
      const read = count(field(raw, 'cache_read_input_tokens')) ?? 0
      const written = count(field(raw, 'cache_creation_input_tokens')) ?? 0
      return usage(input + read + written, output, undefined, read > 0 ? read : undefined)
    }
    case 'gemini': {
      // Gemini counts thoughts apart from candidates: both are generated tokens.
      const raw = field(response, 'usageMetadata')
      const input = count(field(raw, 'promptTokenCount'))
      if (input === undefined) return undefined
      const thoughts = count(field(raw, 'thoughtsTokenCount'))
      const output = (count(field(raw, 'candidatesTokenCount')) ?? 0) + (thoughts ?? 0)
      const tools = count(field(raw, 'toolUsePromptTokenCount')) ?? 0
      return usage(
        input + tools,
        output,
        count(field(raw, 'totalTokenCount')),
        count(field(raw, 'cachedContentTokenCount')),
        thoughts,
      )
    }
  }
}

/** The sum of some usages (steps without usage count as zero). */
export function sumUsage(usages: readonly (TokenUsage | undefined)[]): TokenUsage {
  let input = 0
  let output = 0
  let total = 0
  let cached: number | undefined
  let reasoning: number | undefined
  for (const entry of usages) {
    if (entry === undefined) continue
    input += entry.inputTokens
    output += entry.outputTokens
    total += entry.totalTokens
    if (entry.cachedInputTokens !== undefined) cached = (cached ?? 0) + entry.cachedInputTokens
    if (entry.reasoningTokens !== undefined) reasoning = (reasoning ?? 0) + entry.reasoningTokens
  }
  return usage(input, output, total, cached, reasoning)
}
