import type { JsonValue } from './json-value.js'

/**
 * Hints about who a block is for and how much it matters (MCP's content annotations, carried
 * unchanged; toolgate itself does not act on them).
 */
export interface ContentAnnotations {
  /** Who the block is meant for. */
  audience?: Array<'user' | 'assistant'>
  /** 0 (least important) to 1 (most important). */
  priority?: number
  /** ISO 8601 time the underlying data last changed. */
  lastModified?: string
}

/** Opaque metadata carried with a block (MCP's `_meta`), passed on unread. */
export type ContentMeta = { [key: string]: JsonValue }

/** What every content block may carry besides its payload. */
export interface ContentBlockExtras {
  annotations?: ContentAnnotations
  _meta?: ContentMeta
}

/** Plain text content for the model. */
export interface TextContentBlock extends ContentBlockExtras {
  type: 'text'
  text: string
}

/** Base64 image content for the model. */
export interface ImageContentBlock extends ContentBlockExtras {
  type: 'image'
  /** IANA media type, e.g. `image/png`. */
  mediaType: string
  /** Base64-encoded bytes. */
  data: string
}

/** Base64 audio content. */
export interface AudioContentBlock extends ContentBlockExtras {
  type: 'audio'
  /** IANA media type, e.g. `audio/wav`. */
  mediaType: string
  /** Base64-encoded bytes. */
  data: string
}

/** An icon of a linked resource. */
export interface ContentIcon {
  /** URL of the icon (`https:` or a `data:` URL). */
  src: string
  mediaType?: string
  /** Sizes such as `48x48` or `any`. */
  sizes?: string[]
  theme?: 'light' | 'dark'
}

/** A reference to a resource the client may read, not its contents. */
export interface ResourceLinkContentBlock extends ContentBlockExtras {
  type: 'resource-link'
  uri: string
  /** Programmatic name. */
  name: string
  /** Display name. */
  title?: string
  description?: string
  mediaType?: string
  /** Size of the resource in bytes, when known. */
  size?: number
  icons?: ContentIcon[]
}

/** The text contents of an embedded resource. */
export interface EmbeddedTextResource {
  uri: string
  mediaType?: string
  text: string
  _meta?: ContentMeta
}

/** The binary contents of an embedded resource. */
export interface EmbeddedBlobResource {
  uri: string
  mediaType?: string
  /** Base64-encoded bytes. */
  blob: string
  _meta?: ContentMeta
}

/** A resource's contents embedded in the result (text or binary). */
export interface EmbeddedResourceContentBlock extends ContentBlockExtras {
  type: 'resource'
  resource: EmbeddedTextResource | EmbeddedBlobResource
}

/** One block of model-facing content. Always lossless JSON. */
export type ContentBlock =
  | TextContentBlock
  | ImageContentBlock
  | AudioContentBlock
  | ResourceLinkContentBlock
  | EmbeddedResourceContentBlock

/** A user-role message a tool may defer into the next model request. */
export interface UserMessage {
  role: 'user'
  content: ContentBlock[]
  /** Who minted this message (a plugin name, a nested call id, …). */
  source?: string
  meta?: JsonValue
}
