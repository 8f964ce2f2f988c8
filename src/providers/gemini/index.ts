// toolgate/providers/gemini: the adapter over the official `@google/genai` client, and the Gemini
// format's SDK types for the format-generic functions of toolgate/providers.
import type { Content, Tool as GeminiTool, GenerateContentResponse } from '@google/genai'

declare module '../types.js' {
  interface ProviderMessageMap {
    gemini: Content
  }
  interface ProviderToolMap {
    gemini: GeminiTool
  }
  interface ProviderResponseMap {
    // A bare model Content is accepted too (what the model loop keeps in the conversation).
    gemini: GenerateContentResponse | Content
  }
}

export { type GeminiModelOptions, geminiModel } from '../gemini-model.js'
