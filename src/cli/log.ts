import type { TextSink } from './command.js'

// Logging for the CLI: always stderr, since stdout carries the stdio protocol.

export interface Log {
  info(message: string): void
  /** Only with --verbose. */
  debug(message: string): void
}

export function createLog(stderr: TextSink, verbose: boolean): Log {
  return {
    info: (message) => stderr.write(`toolgate: ${message}\n`),
    debug: (message) => {
      if (verbose) stderr.write(`toolgate: ${message}\n`)
    },
  }
}
