import type { ContentBlock, UserMessage } from '../contract/content.js'
import type {
  ToolErrorInfo,
  ToolExecutionFailure,
  ToolExecutionResult,
  ToolExecutionSuccess,
} from '../contract/execution.js'
import type { JsonValue } from '../contract/json-value.js'
import type { ErrorCode } from '../errors/codes.js'
import { readThrown, type ThrownReading } from './untrusted.js'

/** The message of anything thrown, without the `Error: ` envelope; never throws (reads it once). */
export function describeThrown(thrown: unknown): string {
  return readThrown(thrown).message
}

/** `{ name, code }` of a thrown value: its own string `code` when it has one, else `fallbackCode`. */
export function errorInfo(thrown: unknown, fallbackCode: ErrorCode): ToolErrorInfo {
  const reading = readThrown(thrown)
  return { name: reading.name, code: reading.code ?? fallbackCode }
}

export function failure(
  message: string,
  info: ToolErrorInfo,
  content?: ContentBlock[],
  additionalContexts?: UserMessage[],
  meta?: JsonValue,
): ToolExecutionFailure {
  const result: { -readonly [K in keyof ToolExecutionFailure]: ToolExecutionFailure[K] } = {
    isError: true,
    error: { message, info },
    content: content ?? [{ type: 'text', text: message }],
  }
  if (meta !== undefined) result.meta = meta
  if (additionalContexts?.length) result.additionalContexts = additionalContexts
  return result
}

export function failureFrom(
  thrown: unknown,
  fallbackCode: ErrorCode,
  additionalContexts?: UserMessage[],
  prefix = '',
): ToolExecutionFailure {
  return failureOf(readThrown(thrown), fallbackCode, additionalContexts, prefix)
}

/** A failure from one reading of a thrown value: its message and identity come from the same read. */
export function failureOf(
  reading: ThrownReading,
  fallbackCode: ErrorCode,
  additionalContexts?: UserMessage[],
  prefix = '',
  content?: ContentBlock[],
): ToolExecutionFailure {
  return failure(
    prefix + reading.message,
    { name: reading.name, code: reading.code ?? fallbackCode },
    content,
    additionalContexts,
  )
}

export function success(
  value: JsonValue,
  content: ContentBlock[],
  meta: JsonValue | undefined,
  additionalContexts: UserMessage[] | undefined,
  concludesTurn: boolean,
): ToolExecutionSuccess {
  const result: { -readonly [K in keyof ToolExecutionSuccess]: ToolExecutionSuccess[K] } = {
    isError: false,
    value,
    content,
  }
  if (meta !== undefined) result.meta = meta
  if (additionalContexts?.length) result.additionalContexts = additionalContexts
  if (concludesTurn) result.concludesTurn = true
  return result
}

/** The same result carrying `contexts` instead (results are immutable once built). */
export function withDeferred(result: ToolExecutionResult, contexts: UserMessage[] | undefined): ToolExecutionResult {
  if (contexts === result.additionalContexts) return result
  if (result.isError) {
    return failure(
      result.error.message,
      result.error.info ?? { name: 'Error', code: 'TOOL_ERROR' },
      result.content,
      contexts,
      result.meta,
    )
  }
  return success(result.value, result.content, result.meta, contexts, result.concludesTurn === true)
}
