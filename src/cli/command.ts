import type { TextSink } from '../gateway/index.js'

export { UsageError } from '../errors/usage-error.js'
export type { TextSink } from '../gateway/index.js'

// The shape every `toolgate <command>` module default-exports.

/** Where a command writes: stdout is reserved for protocol or the command's answer, stderr for logs. */
export interface CliIo {
  readonly stdout: TextSink
  readonly stderr: TextSink
}

/** One subcommand. `run` resolves with the process exit code, or never settles while it serves. */
export interface CliCommand {
  /** One line for `toolgate --help`. */
  readonly summary: string
  /** Full usage text for `toolgate <command> --help`. */
  readonly usage: string
  run(argv: readonly string[], io: CliIo): Promise<number>
}
