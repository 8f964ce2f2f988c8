// How one tool result reads to a model, shared by the per-format message builders.

import type { ContentBlock, ImageContentBlock, UserMessage } from '../contract/content.js'
import type { ToolExecutionResult } from '../contract/execution.js'

/** Said instead of an empty result, since several APIs reject empty text. */
export const EMPTY_RESULT = '(no output)'

/** Image types the OpenAI, Anthropic and Gemini vision inputs all take. */
const PORTABLE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

export function isPortableImage(block: ImageContentBlock): boolean {
  return PORTABLE_IMAGE_TYPES.has(block.mediaType)
}

/** Text a model reads for an image it cannot be shown. */
export function imagePlaceholder(block: ImageContentBlock, where?: string): string {
  return where === undefined
    ? `[image (${block.mediaType}) omitted: this provider does not accept that image type]`
    : `[image (${block.mediaType}) ${where}]`
}

/** The error code of a failure, for marking it where an API has no error flag. */
export function errorCode(result: ToolExecutionResult): string | undefined {
  return result.isError ? (result.error.info?.code ?? 'TOOL_ERROR') : undefined
}

/** A failure's text prefix for APIs without an error flag (OpenAI): `Error (TOOL_DENIED): …`. */
export function errorPrefix(result: ToolExecutionResult): string {
  const code = errorCode(result)
  return code === undefined ? '' : `Error (${code}): `
}

/** Join text blocks; images become placeholders via `image`. Never empty. */
export function joinText(content: readonly ContentBlock[], image: (block: ImageContentBlock) => string): string {
  const parts: string[] = []
  for (const block of content) parts.push(block.type === 'text' ? block.text : image(block))
  const text = parts.join('\n')
  return text === '' ? EMPTY_RESULT : text
}

/** `data:` URL of a base64 image. */
export function dataUrl(block: ImageContentBlock): string {
  return `data:${block.mediaType};base64,${block.data}`
}

/** The deferred user messages of a batch, in call order (they follow the results). */
export function deferredMessages(results: readonly { readonly result: ToolExecutionResult }[]): UserMessage[] {
  const out: UserMessage[] = []
  for (const { result } of results) if (result.additionalContexts) out.push(...result.additionalContexts)
  return out
}
