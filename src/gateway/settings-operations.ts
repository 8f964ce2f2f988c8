// The operator's flags of `serve`: --drain-timeout, --log-format and --log-level.
import { UsageError } from '../errors/usage-error.js'
import { drainTimeoutProblem } from './drain-timeout.js'
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './log.js'

export function readOperationFlags(values: Record<string, unknown>): {
  drainTimeout?: number
  logFormat?: LogFormat
  logLevel?: LogLevel
} {
  const out: { drainTimeout?: number; logFormat?: LogFormat; logLevel?: LogLevel } = {}
  const drain = values['drain-timeout']
  if (drain !== undefined) {
    const problem = drainTimeoutProblem(String(drain))
    if (problem !== undefined) throw new UsageError(problem)
    out.drainTimeout = Number(drain)
  }
  const format = values['log-format']
  if (format !== undefined) {
    if (!(LOG_FORMATS as readonly unknown[]).includes(format))
      throw new UsageError(`--log-format: expected text or json, got "${String(format)}"`)
    out.logFormat = format as LogFormat
  }
  const level = values['log-level']
  if (level !== undefined) {
    if (!(LOG_LEVELS as readonly unknown[]).includes(level))
      throw new UsageError(`--log-level: expected debug, info, warn or error, got "${String(level)}"`)
    out.logLevel = level as LogLevel
  }
  return out
}
