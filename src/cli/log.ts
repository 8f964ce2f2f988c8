// Logging for the CLI: always stderr, since stdout carries the stdio protocol.

export interface Log {
  info(message: string): void
  /** Only with --verbose. */
  debug(message: string): void
}

export function createLog(stderr: NodeJS.WritableStream, verbose: boolean): Log {
  return {
    info: (message) => stderr.write(`toolgate: ${message}\n`),
    debug: (message) => {
      if (verbose) stderr.write(`toolgate: ${message}\n`)
    },
  }
}
