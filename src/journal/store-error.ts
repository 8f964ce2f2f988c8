import { ToolgateError } from '../errors/toolgate-error.js'

/** The store failed: unreachable, failed mid-operation, or holding a schema this code does not know. */
export class StoreError extends ToolgateError {
  override readonly name = 'StoreError'
  constructor(
    readonly code: 'STORE_UNAVAILABLE' | 'STORE_SCHEMA',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
