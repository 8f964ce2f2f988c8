import type { ErrorCode } from './codes.js'

/**
 * The base of every error toolgate throws. `code` is stable and machine-readable (each one is
 * listed with its meaning in `ERROR_CODES`, exported from the package root); the message is for
 * people and may change.
 * When a thrown error ends a tool call, its `code` becomes the failed result's `error.info.code`.
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
}
