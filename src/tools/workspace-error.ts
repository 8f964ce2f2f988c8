import { ToolgateError } from '../errors/toolgate-error.js'
// Its own module so the public declarations reach it without naming Node's fs types
// (consumers compile without @types/node).

/** A path argument that is malformed or leaves the workspace. */
export class WorkspacePathError extends ToolgateError {
  override name = 'WorkspacePathError'
  readonly code = 'PATH_OUTSIDE_WORKSPACE' as const
}
