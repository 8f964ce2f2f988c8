import { ToolgateError } from '../errors/toolgate-error.js'
/** Thrown when a value is not lossless JSON; `path` names the first offending member. */
export class JsonValueError extends ToolgateError {
  override readonly name = 'JsonValueError'
  readonly code = 'INVALID_JSON_VALUE' as const
  /** Path of the first offending member, e.g. `value.items[3].when`. */
  readonly path: string

  constructor(path: string, reason: string) {
    super(`${path} ${reason}`)
    this.path = path
  }
}
