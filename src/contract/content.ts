import type { JsonValue } from './json-value.js'

/** Plain text content for the model. */
export interface TextContentBlock {
  type: 'text'
  text: string
}

/** Base64 image content for the model. */
export interface ImageContentBlock {
  type: 'image'
  /** IANA media type, e.g. `image/png`. */
  mediaType: string
  /** Base64-encoded bytes. */
  data: string
}

/** One block of model-facing content. Always lossless JSON. */
export type ContentBlock = TextContentBlock | ImageContentBlock

/** A user-role message a tool may defer into the next model request. */
export interface UserMessage {
  role: 'user'
  content: ContentBlock[]
  /** Who minted this message (a plugin name, a nested call id, …). */
  source?: string
  meta?: JsonValue
}
