// toolgate/providers/anthropic: the adapter over the official `@anthropic-ai/sdk` client, and the
// Anthropic format's SDK types for the format-generic functions of toolgate/providers.
import type Anthropic from '@anthropic-ai/sdk'

declare module '../types.js' {
  interface ProviderMessageMap {
    anthropic: Anthropic.Messages.MessageParam
  }
  interface ProviderToolMap {
    anthropic: Anthropic.Messages.Tool | Anthropic.Messages.ToolSearchToolBm25_20251119
  }
  interface ProviderResponseMap {
    anthropic: Anthropic.Messages.Message
  }
}

export { type AnthropicModelOptions, anthropicModel } from '../anthropic-model.js'
