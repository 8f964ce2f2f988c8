// toolgate/providers/openai: the adapters over the official `openai` client, and the OpenAI
// formats' SDK types for the format-generic functions of toolgate/providers.
import type OpenAI from 'openai'

declare module '../types.js' {
  interface ProviderMessageMap {
    'openai-chat': OpenAI.Chat.Completions.ChatCompletionMessageParam
    'openai-responses': OpenAI.Responses.ResponseInputItem
  }
  interface ProviderToolMap {
    'openai-chat': OpenAI.Chat.Completions.ChatCompletionFunctionTool
    'openai-responses': OpenAI.Responses.FunctionTool | OpenAI.Responses.ToolSearchTool
  }
  interface ProviderResponseMap {
    'openai-chat': OpenAI.Chat.Completions.ChatCompletion
    'openai-responses': OpenAI.Responses.Response
  }
}

export { type OpenAIChatModelOptions, openAIChatModel } from '../openai-chat-model.js'
export { type OpenAIResponsesModelOptions, openAIResponsesModel } from '../openai-responses-model.js'
