// How one tool result reads to a model, shared by the per-format message builders.

import type { ContentBlock, ImageContentBlock, TextContentBlock, UserMessage } from '../contract/content.js'
import type { ToolExecutionResult } from '../contract/execution.js'
import { base64Bytes, formatBytes } from '../util/byte-size.js'

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

/** A block as every provider takes it: text or an image. */
export type ModelBlock = TextContentBlock | ImageContentBlock

/**
 * Content as the provider APIs take it. Text and images stay; an embedded text resource becomes its
 * text under a header line, an embedded image blob an image; audio, links and other blobs become a
 * one-line description (kind, type, size, URI), never their base64.
 */
export function modelBlocks(content: readonly ContentBlock[]): ModelBlock[] {
  const out: ModelBlock[] = []
  for (const block of content) {
    switch (block.type) {
      case 'text':
      case 'image':
        out.push(block)
        break
      case 'audio':
        out.push(text(`[audio ${block.mediaType}, ${formatBytes(base64Bytes(block.data))}]`))
        break
      case 'resource-link': {
        const details = [block.mediaType, block.size === undefined ? undefined : formatBytes(block.size)]
          .filter((part) => part !== undefined)
          .join(', ')
        const name = block.title ?? block.name
        out.push(
          text(
            `[resource link: ${name} <${block.uri}>${details === '' ? '' : ` (${details})`}]` +
              (block.description === undefined ? '' : ` ${block.description}`),
          ),
        )
        break
      }
      case 'resource': {
        const r = block.resource
        const type = r.mediaType === undefined ? '' : ` (${r.mediaType})`
        if ('text' in r) out.push(text(`[resource ${r.uri}${type}]\n${r.text}`))
        else if (r.mediaType?.startsWith('image/')) out.push({ type: 'image', mediaType: r.mediaType, data: r.blob })
        else out.push(text(`[resource ${r.uri}: ${r.mediaType ?? 'binary'}, ${formatBytes(base64Bytes(r.blob))}]`))
        break
      }
    }
  }
  return out
}

const text = (value: string): TextContentBlock => ({ type: 'text', text: value })

/** Join the text of {@link modelBlocks}; images become placeholders via `image`. Never empty. */
export function joinText(content: readonly ContentBlock[], image: (block: ImageContentBlock) => string): string {
  const parts: string[] = []
  for (const block of modelBlocks(content)) parts.push(block.type === 'text' ? block.text : image(block))
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
