import { ToolgateError } from './toolgate-error.js'

/**
 * An option, a config value or an argument given to a toolgate API is not valid, so the API did
 * nothing. `path` names what to fix (`createBashTool(options).sandbox`,
 * `TimeoutPolicy config.defaultTimeoutMs`, the command line's config file); `issues` lists every
 * problem found, each naming its own place when there are several.
 *
 * ```ts
 * try {
 *   new ResultBudget(ctx, { maxBytes: 100 })
 * } catch (error) {
 *   if (error instanceof ConfigError) console.error(error.path, error.issues)
 * }
 * ```
 */
export class ConfigError extends ToolgateError {
  readonly code = 'INVALID_CONFIG' as const
  /** The option, config value or argument that is wrong, or the file that holds the problems. */
  readonly path: string
  /** Every problem found: one entry for a single check, several for a config file checked key by key. */
  readonly issues: readonly string[]
  constructor(path: string, problem: string | readonly string[]) {
    const issues = typeof problem === 'string' ? [problem] : [...problem]
    super(
      typeof problem === 'string'
        ? `${path}: ${problem}`
        : `${path}:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`,
    )
    this.name = 'ConfigError'
    this.path = path
    this.issues = Object.freeze(issues)
  }
}
