// MCP content blocks ↔ toolgate content blocks. toolgate's model-facing content is text and
// images; everything else an MCP server can send is described in text so nothing is dropped silently.
import type { ContentBlock } from '../contract/content.js'

/** The MCP content block shapes this module reads (a structural subset of the SDK's union). */
export interface McpContentBlock {
  type: string
  [key: string]: unknown
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** Map one MCP content block onto toolgate content (text, image, resource → text or image). */
export function fromMcpContent(block: unknown): ContentBlock {
  if (typeof block !== 'object' || block === null) return { type: 'text', text: String(block) }
  const b = block as Record<string, unknown>
  switch (b.type) {
    case 'text':
      return { type: 'text', text: str(b.text) ?? '' }
    case 'image': {
      const data = str(b.data)
      const mediaType = str(b.mimeType)
      if (data !== undefined && mediaType !== undefined) return { type: 'image', mediaType, data }
      break
    }
    case 'audio':
      return { type: 'text', text: `[audio ${str(b.mimeType) ?? 'unknown type'}, ${base64Bytes(str(b.data))} bytes]` }
    case 'resource_link': {
      const name = str(b.name) ?? str(b.uri) ?? 'resource'
      const description = str(b.description)
      return {
        type: 'text',
        text: `Resource link: ${name} <${str(b.uri) ?? ''}>${description ? ` ${description}` : ''}`,
      }
    }
    case 'resource': {
      const r = (typeof b.resource === 'object' && b.resource !== null ? b.resource : {}) as Record<string, unknown>
      const uri = str(r.uri) ?? ''
      const mimeType = str(r.mimeType)
      const text = str(r.text)
      if (text !== undefined)
        return { type: 'text', text: `Resource ${uri}${mimeType ? ` (${mimeType})` : ''}:\n${text}` }
      const blob = str(r.blob)
      if (blob !== undefined && mimeType?.startsWith('image/'))
        return { type: 'image', mediaType: mimeType, data: blob }
      return {
        type: 'text',
        text: `[binary resource ${uri} (${mimeType ?? 'unknown type'}), ${base64Bytes(blob)} bytes]`,
      }
    }
  }
  return { type: 'text', text: JSON.stringify(block) }
}

/** Map toolgate content onto MCP content blocks. */
export function toMcpContent(block: ContentBlock): McpContentBlock {
  return block.type === 'image'
    ? { type: 'image', data: block.data, mimeType: block.mediaType }
    : { type: 'text', text: block.text }
}

function base64Bytes(data: string | undefined): number {
  if (!data) return 0
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.floor((data.length * 3) / 4) - padding
}
