import { ToolgateError } from '../errors/toolgate-error.js'
// The shape every `toolgate <command>` module default-exports.

/** Where a command writes: stdout is reserved for protocol or the command's answer, stderr for logs. */
export interface CliIo {
  readonly stdout: TextSink
  readonly stderr: TextSink
}

/** The part of a writable stream the commands use. */
export interface TextSink {
  write(text: string): unknown
}

/** One subcommand. `run` resolves with the process exit code, or never settles while it serves. */
export interface CliCommand {
  /** One line for `toolgate --help`. */
  readonly summary: string
  /** Full usage text for `toolgate <command> --help`. */
  readonly usage: string
  run(argv: readonly string[], io: CliIo): Promise<number>
}

/** A usage mistake: printed with the command's usage, exit code 2. */
export class UsageError extends ToolgateError {
  readonly code = 'INVALID_USAGE' as const
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}
