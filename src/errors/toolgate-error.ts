import type { ContentBlock } from '../contract/content.js'
import type { ErrorCode } from './codes.js'

/**
 * The base of every error toolgate throws. `code` is stable and machine-readable (each one is
 * listed with its meaning in `ERROR_CODES`, exported from the package root); the message is for
 * people and may change.
 * When a thrown error ends a tool call, its `code` becomes the failed result's `error.info.code`,
 * and its `content`, when it carries valid content blocks, becomes the failed result's content in
 * place of the message's text.
 *
 * ```ts
 * try {
 *   tools.register(definition)
 * } catch (error) {
 *   if (error instanceof ToolgateError) console.error(error.code, error.message)
 * }
 * ```
 */
export abstract class ToolgateError extends Error {
  /** The stable code of this failure: a key of `ERROR_CODES`. */
  abstract readonly code: ErrorCode
  /** Content the failure shows the model (an MCP server's own error blocks, say), beside `message`. */
  declare readonly content?: readonly ContentBlock[]
}
