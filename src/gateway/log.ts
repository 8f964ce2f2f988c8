// Logging for the CLI: always stderr, since stdout carries the stdio protocol. Text by default
// ("toolgate: message", unchanged); `--log-format json` writes one JSON object per line for a
// collector. No logging library: a line of JSON.stringify is all this needs.

/** The part of a writable stream the commands use. */
export interface TextSink {
  write(text: string): unknown
}

/** What a log line may carry besides its message; never arguments, tokens or secrets above debug. */
export interface LogFields {
  readonly callId?: string
  readonly tool?: string
  readonly subject?: string
  readonly traceId?: string
  readonly outcome?: string
}

export interface Log {
  info(message: string, fields?: LogFields): void
  /** Only with --verbose or --log-level debug. */
  debug(message: string, fields?: LogFields): void
  warn?(message: string, fields?: LogFields): void
  error?(message: string, fields?: LogFields): void
  /** `--log-format`. */
  readonly format?: LogFormat
}

export type LogFormat = 'text' | 'json'
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json']
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error']

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 }

export interface LogOptions {
  readonly format?: LogFormat
  /** The lowest level written; --verbose means debug. */
  readonly level?: LogLevel
}

export function createLog(stderr: TextSink, verbose: boolean, options: LogOptions = {}): Log {
  const format = options.format ?? 'text'
  const lowest = RANK[options.level ?? (verbose ? 'debug' : 'info')]
  const write = (level: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[level] < lowest) return
    if (format === 'text') return void stderr.write(`toolgate: ${message}\n`)
    const line: Record<string, string> = { time: new Date().toISOString(), level, msg: message }
    for (const [key, value] of Object.entries(fields ?? {})) if (typeof value === 'string') line[key] = value
    stderr.write(`${JSON.stringify(line)}\n`)
  }
  return { info: write('info'), debug: write('debug'), warn: write('warn'), error: write('error'), format }
}
