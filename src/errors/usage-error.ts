import { ToolgateError } from './toolgate-error.js'

// A flag or config mistake, found by the CLI or while the gateway reads its settings; the CLI prints it
// with the command's usage.

/** A usage mistake: printed with the command's usage, exit code 2. */
export class UsageError extends ToolgateError {
  readonly code = 'INVALID_USAGE' as const
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}
