import type { ContentBlock, UserMessage } from '../contract/content.js'
import type { JsonValue } from '../contract/json-value.js'
import { snapshotJsonValue } from '../json/index.js'

/** Snapshot model-facing content and check every block's shape; throws a path-qualified TypeError. */
export function snapshotContent(value: unknown, path: string): ContentBlock[] {
  const snapshot = snapshotJsonValue(value, path)
  if (!Array.isArray(snapshot)) throw new TypeError(`${path}: expected an array of content blocks`)
  for (let i = 0; i < snapshot.length; i++) checkBlock(snapshot[i], `${path}[${i}]`)
  return snapshot as unknown as ContentBlock[]
}

function checkBlock(block: JsonValue, path: string): void {
  if (typeof block !== 'object' || block === null || Array.isArray(block)) {
    throw new TypeError(`${path}: expected a content block object`)
  }
  if (block.type === 'text') {
    if (typeof block.text !== 'string') throw new TypeError(`${path}.text: expected a string`)
  } else if (block.type === 'image') {
    if (typeof block.mediaType !== 'string') throw new TypeError(`${path}.mediaType: expected a string`)
    if (typeof block.data !== 'string') throw new TypeError(`${path}.data: expected a base64 string`)
  } else {
    throw new TypeError(`${path}.type: expected "text" or "image", got ${JSON.stringify(block.type)}`)
  }
}

/** Snapshot one deferred user message and check its shape. */
export function snapshotUserMessage(value: unknown, path: string): UserMessage {
  const snapshot = snapshotJsonValue(value, path)
  checkUserMessage(snapshot, path)
  return snapshot as unknown as UserMessage
}

/** Snapshot a list of user messages (a decision's `additionalContexts`). */
export function snapshotUserMessages(value: unknown, path: string): UserMessage[] {
  const snapshot = snapshotJsonValue(value, path)
  if (!Array.isArray(snapshot)) throw new TypeError(`${path}: expected an array of user messages`)
  for (let i = 0; i < snapshot.length; i++) checkUserMessage(snapshot[i], `${path}[${i}]`)
  return snapshot as unknown as UserMessage[]
}

function checkUserMessage(message: JsonValue, path: string): void {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new TypeError(`${path}: expected a user message object`)
  }
  if (message.role !== 'user') throw new TypeError(`${path}.role: expected "user"`)
  if (!Array.isArray(message.content)) throw new TypeError(`${path}.content: expected an array of content blocks`)
  for (let i = 0; i < message.content.length; i++) checkBlock(message.content[i], `${path}.content[${i}]`)
  if (message.source !== undefined && typeof message.source !== 'string') {
    throw new TypeError(`${path}.source: expected a string when present`)
  }
}
