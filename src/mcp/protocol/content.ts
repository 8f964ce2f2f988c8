// MCP content blocks ↔ toolgate content blocks. Every MCP kind has a toolgate counterpart, so a
// block crosses the gateway unchanged: only the spelling differs (`mimeType` is `mediaType`,
// `resource_link` is `resource-link`), and annotations and `_meta` ride along as they came.
import type { ContentBlock, EmbeddedBlobResource, EmbeddedTextResource } from '../../contract/content.js'

/** The MCP content block shapes this module reads and writes (a structural subset of the SDK's union). */
export interface McpContentBlock {
  type: string
  [key: string]: unknown
}

type Fields = Record<string, unknown>

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Copy the named keys that are present, renaming as `rename` says; absent keys stay absent. */
function copy(from: Fields, to: Fields, keys: readonly string[], rename: Readonly<Record<string, string>> = {}) {
  for (const key of keys) if (from[key] !== undefined) to[rename[key] ?? key] = from[key]
}

const FROM_MIME = { mimeType: 'mediaType' } as const
const TO_MIME = { mediaType: 'mimeType' } as const
const EXTRAS = ['annotations', '_meta'] as const

/** Icons with their type key renamed (`from` is the key the source spells it with). */
function iconsFrom(icons: unknown, from: string, rename: Readonly<Record<string, string>>): Fields[] | undefined {
  if (!Array.isArray(icons)) return undefined
  return icons.map((icon) => {
    if (!isFields(icon)) return icon as Fields
    const out: Fields = {}
    copy(icon, out, ['src', from, 'sizes', 'theme'], rename)
    return out
  })
}

/**
 * Map one MCP content block onto toolgate content. A block of a kind MCP does not define, or one
 * missing its required fields, becomes a text block holding its JSON, so nothing is lost.
 */
export function fromMcpContent(block: unknown): ContentBlock {
  if (!isFields(block)) return { type: 'text', text: String(block) }
  const out: Fields = {}
  switch (block.type) {
    case 'text':
      if (str(block.text) === undefined) break
      out.type = 'text'
      out.text = block.text
      return withExtras(block, out)
    case 'image':
    case 'audio':
      if (str(block.data) === undefined || str(block.mimeType) === undefined) break
      out.type = block.type
      copy(block, out, ['mimeType', 'data'], FROM_MIME)
      return withExtras(block, out)
    case 'resource_link': {
      if (str(block.uri) === undefined || str(block.name) === undefined) break
      out.type = 'resource-link'
      copy(block, out, ['uri', 'name', 'title', 'description', 'mimeType', 'size'], FROM_MIME)
      const icons = iconsFrom(block.icons, 'mimeType', FROM_MIME)
      if (icons !== undefined) out.icons = icons
      return withExtras(block, out)
    }
    case 'resource': {
      const r = block.resource
      if (!isFields(r) || str(r.uri) === undefined || (str(r.text) === undefined && str(r.blob) === undefined)) break
      const resource: Fields = {}
      copy(r, resource, ['uri', 'mimeType', 'text', 'blob', '_meta'], FROM_MIME)
      out.type = 'resource'
      out.resource = resource as unknown as EmbeddedTextResource | EmbeddedBlobResource
      return withExtras(block, out)
    }
  }
  return { type: 'text', text: JSON.stringify(block) }
}

function withExtras(from: Fields, out: Fields): ContentBlock {
  copy(from, out, EXTRAS)
  return out as unknown as ContentBlock
}

/** Map toolgate content onto an MCP content block: the inverse of {@link fromMcpContent}. */
export function toMcpContent(block: ContentBlock): McpContentBlock {
  const from = block as unknown as Fields
  const out: McpContentBlock = { type: block.type }
  switch (block.type) {
    case 'text':
      out.text = block.text
      break
    case 'image':
    case 'audio':
      copy(from, out, ['data', 'mediaType'], TO_MIME)
      break
    case 'resource-link': {
      out.type = 'resource_link'
      copy(from, out, ['uri', 'name', 'title', 'description', 'mediaType', 'size'], TO_MIME)
      const icons = iconsFrom(block.icons, 'mediaType', TO_MIME)
      if (icons !== undefined) out.icons = icons
      break
    }
    case 'resource': {
      const resource: Fields = {}
      copy(block.resource as unknown as Fields, resource, ['uri', 'mediaType', 'text', 'blob', '_meta'], TO_MIME)
      out.resource = resource
      break
    }
  }
  copy(from, out, EXTRAS)
  return out
}
