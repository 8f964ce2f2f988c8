import { ToolgateError } from '../errors/toolgate-error.js'

/**
 * The caller's own credential for an upstream could not be had, so the call was not made: the
 * message names the server and what the caller (or the operator) can do. It never holds a secret.
 */
export class UpstreamCredentialError extends ToolgateError {
  readonly code = 'UPSTREAM_CREDENTIAL' as const
  constructor(message: string) {
    super(message)
    this.name = 'UpstreamCredentialError'
  }
}
