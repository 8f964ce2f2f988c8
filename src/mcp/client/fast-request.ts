// An upstream `tools/call` without the SDK's Protocol: the request goes out through the session's
// transport, and its response and progress are taken off the transport before the SDK's message
// handler would see them. The SDK's request path builds closures, a timeout record and a zod
// parse of the result per call; a gateway pays that on every relayed call. Its behaviour is kept:
// the same ids never meet (this path's are strings, the SDK's numbers), the same cancellation,
// timeout (reset by progress), closing and error objects, and the same result checks, the
// tool's output schema included. What the SDK's callTool knows of each tool (its output schema,
// whether it needs a task) this path keeps itself, from the listings the gateway applies: the SDK
// keeps its copy private.

import { isRecord } from '../../util/is-record.js'
import { isCommonCallToolResult } from '../protocol/common-call-result.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { SchemaValidators } from '../protocol/lazy-json-schema-validator.js'
import type { CallToolResult, JSONRPCMessage, McpTransport, Tool } from '../protocol/wire-types.js'
import { checkWithSchema, UpstreamRpcError as McpError, type StandardSchema } from './upstream-client.js'

/** Options of one call, as callRemote gives them to the SDK's `callTool`. */
export interface FastCallOptions {
  readonly signal: AbortSignal
  readonly timeout: number
  readonly onprogress?: (progress: { progress: number; total?: number; message?: string }) => void
}

/** A session's lean `tools/call`. */
export interface FastRequests {
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    options: FastCallOptions,
  ): Promise<CallToolResult>
  /**
   * One page of `tools/list`, checked only as far as the link reads it (a list of named tools with
   * object input schemas): the SDK's schema walks every nested schema value, and a hostile server's
   * schema thousands of levels deep would overflow its stack and lose the whole listing, where
   * registration skips that one tool.
   */
  listTools(
    params: { cursor?: string } | undefined,
    options: FastCallOptions,
  ): Promise<{ tools: Tool[]; nextCursor?: string }>
  /**
   * Remember what the applied listing's `tools` say of themselves (output schemas, task support),
   * replacing what an earlier listing said, as the SDK client does for its own callTool.
   */
  rememberTools(tools: readonly Tool[]): void
}

/** What a call must check of one listed tool. */
interface ToolCheck {
  readonly taskRequired: boolean
  readonly validate: ((value: unknown) => { valid: boolean; errorMessage?: string }) | undefined
}

interface Pending {
  /** What checks the result (the method's own check) before it resolves the request. */
  readonly method: 'tools/call' | 'tools/list'
  readonly resolve: (result: never) => void
  readonly reject: (error: unknown) => void
  readonly options: FastCallOptions
  /** When the request times out (performance.now() ms), unless progress moves it. */
  deadline: number
  readonly onTimeout: () => void
  readonly onAbort: () => void
}

/** One session's counter of fast ids; a prefix the SDK's numeric ids can never take. */
const ID_PREFIX = 'tg-'

/**
 * Install the lean path on a connected client's transport. Output schemas compile through
 * `validators`, the provider the client was made with.
 */
export function installFastRequests(
  client: { onerror?: ((error: Error) => void) | undefined },
  transport: McpTransport,
  validators: SchemaValidators,
  resultSchema: StandardSchema,
): FastRequests {
  let checks = new Map<string, ToolCheck>()
  const pending = new Map<string, Pending>()
  let serial = 0
  let closed = false

  // One timer for all the session's requests, armed for the earliest deadline and left armed when
  // a request ends: a timer per request costs more than the rest of its bookkeeping (each new one
  // is filed into the timer queue). It holds the process open only while a request is pending.
  let timer: ReturnType<typeof setTimeout> | undefined
  let armedFor = Number.POSITIVE_INFINITY
  const arm = (deadline: number): void => {
    if (timer !== undefined && armedFor <= deadline) {
      timer.ref()
      return
    }
    clearTimeout(timer)
    armedFor = deadline
    timer = setTimeout(expire, Math.max(0, deadline - performance.now()))
  }
  const expire = (): void => {
    timer = undefined
    armedFor = Number.POSITIVE_INFINITY
    const now = performance.now()
    let next = Number.POSITIVE_INFINITY
    for (const entry of [...pending.values()]) {
      if (entry.deadline <= now) entry.onTimeout()
      else if (entry.deadline < next) next = entry.deadline
    }
    if (next !== Number.POSITIVE_INFINITY) arm(next)
  }

  // What an ended request leaves to undo (its abort listener, the timer's hold on the process) is
  // undone once the current turn of the event loop is over, in one batch: an answer goes on to the
  // caller (and, in a gateway, out to its client) first. The request is no longer pending at once,
  // so a late abort or timeout finds nothing to cancel.
  let unlinking: Pending[] = []
  const unlink = (): void => {
    const entries = unlinking
    unlinking = []
    for (const entry of entries) entry.options.signal.removeEventListener('abort', entry.onAbort)
    if (pending.size === 0) timer?.unref()
  }
  const finish = (id: string, entry: Pending): void => {
    pending.delete(id)
    if (unlinking.length === 0) setImmediate(unlink)
    unlinking.push(entry)
  }

  /** Give up on the request as the SDK does: tell the server, and reject with an McpError. */
  const cancel = (id: string, entry: Pending, reason: unknown): void => {
    finish(id, entry)
    transport
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } })
      .catch((error) => client.onerror?.(new Error(`Failed to send cancellation: ${error}`)))
    entry.reject(reason instanceof McpError ? reason : new McpError(JsonRpcCode.RequestTimeout, String(reason)))
  }

  const onResponse = (id: string, entry: Pending, message: Record<string, unknown>): void => {
    finish(id, entry)
    if (entry.options.signal.aborted) return
    if (isRecord(message.error)) {
      const { code, message: text, data } = message.error as { code: number; message: string; data?: unknown }
      entry.reject(new McpError(code, text, data))
      return
    }
    const result = message.result
    if (entry.method === 'tools/list') {
      const problem = toolListProblem(result)
      if (problem === undefined) entry.resolve(result as never)
      else entry.reject(new McpError(JsonRpcCode.InvalidParams, `Invalid tools/list result: ${problem}`))
    } else if (isCommonCallToolResult(result)) entry.resolve(result as never)
    else {
      const checked = checkWithSchema(resultSchema, result)
      if (checked.ok) entry.resolve(checked.value as never)
      else entry.reject(new Error(`Invalid tools/call result: ${checked.problems}`))
    }
  }

  const onProgress = (entry: Pending, params: Record<string, unknown>): void => {
    // A later deadline: the armed timer finds it moved when it fires.
    entry.deadline = performance.now() + entry.options.timeout
    const { progressToken: _token, ...progress } = params
    entry.options.onprogress?.(progress as { progress: number; total?: number; message?: string })
  }

  /** True when the message is this path's: a response to its request or progress of its token. */
  const take = (message: JSONRPCMessage): boolean => {
    if (pending.size === 0) return false
    const m = message as unknown as Record<string, unknown>
    if (typeof m.id === 'string' && m.method === undefined) {
      const entry = pending.get(m.id)
      if (entry === undefined) return false
      onResponse(m.id, entry, m)
      return true
    }
    if (m.method === 'notifications/progress' && isRecord(m.params)) {
      const { progressToken, progress } = m.params
      if (typeof progressToken !== 'string' || typeof progress !== 'number') return false
      const entry = pending.get(progressToken)
      if (entry === undefined) return false
      onProgress(entry, m.params)
      return true
    }
    return false
  }

  const sdkMessage = transport.onmessage
  transport.onmessage = (message, extra) => {
    if (!take(message)) sdkMessage?.call(transport, message, extra)
  }
  const sdkClose = transport.onclose
  transport.onclose = () => {
    closed = true
    clearTimeout(timer)
    timer = undefined
    sdkClose?.call(transport)
    const error = new McpError(JsonRpcCode.ConnectionClosed, 'Connection closed')
    for (const [id, entry] of pending) {
      finish(id, entry)
      entry.reject(error)
    }
  }

  const request = <T>(method: Pending['method'], params: Record<string, unknown>, options: FastCallOptions) =>
    new Promise<T>((resolve, reject) => {
      if (closed) return reject(new Error('Not connected'))
      options.signal.throwIfAborted()
      const id = `${ID_PREFIX}${++serial}`
      const entry: Pending = {
        method,
        resolve: resolve as (result: never) => void,
        reject,
        options,
        deadline: performance.now() + options.timeout,
        onTimeout: () =>
          cancel(
            id,
            entry,
            new McpError(JsonRpcCode.RequestTimeout, 'Request timed out', { timeout: options.timeout }),
          ),
        onAbort: () => {
          if (pending.get(id) === entry) cancel(id, entry, options.signal.reason)
        },
      }
      arm(entry.deadline)
      options.signal.addEventListener('abort', entry.onAbort, { once: true })
      pending.set(id, entry)
      const message = {
        method,
        params: options.onprogress === undefined ? params : { ...params, _meta: { progressToken: id } },
        jsonrpc: '2.0',
        id,
      } as JSONRPCMessage
      transport.send(message).catch((error) => {
        if (pending.get(id) !== entry) return
        finish(id, entry)
        reject(error)
      })
    })

  return {
    listTools: (params, options) => request('tools/list', params ?? {}, options),
    rememberTools(listed) {
      const next = new Map<string, ToolCheck>()
      for (const tool of listed)
        next.set(tool.name, {
          taskRequired: tool.execution?.taskSupport === 'required',
          validate:
            tool.outputSchema === undefined
              ? undefined
              : validators.getValidator(tool.outputSchema as Parameters<SchemaValidators['getValidator']>[0]),
        })
      checks = next
    },
    async callTool(params, options) {
      const check = checks.get(params.name)
      if (check?.taskRequired)
        throw new McpError(
          JsonRpcCode.InvalidRequest,
          `Tool "${params.name}" requires task-based execution. Use client.experimental.tasks.callToolStream() instead.`,
        )
      const result = await request<CallToolResult>('tools/call', params, options)
      // As the SDK's callTool: a tool with an output schema must return structured content that fits it.
      const validator = check?.validate
      if (validator) {
        if (!result.structuredContent && !result.isError)
          throw new McpError(
            JsonRpcCode.InvalidRequest,
            `Tool ${params.name} has an output schema but did not return structured content`,
          )
        if (result.structuredContent) {
          let checked: { valid: boolean; errorMessage?: string }
          try {
            checked = validator(result.structuredContent)
          } catch (error) {
            throw new McpError(
              JsonRpcCode.InvalidParams,
              `Failed to validate structured content: ${error instanceof Error ? error.message : String(error)}`,
            )
          }
          if (!checked.valid)
            throw new McpError(
              JsonRpcCode.InvalidParams,
              `Structured content does not match the tool's output schema: ${checked.errorMessage}`,
            )
        }
      }
      return result
    },
  }
}

/** What is wrong with a `tools/list` result as the link reads it, if anything. */
function toolListProblem(result: unknown): string | undefined {
  if (!isRecord(result) || !Array.isArray(result.tools)) return 'tools: expected an array'
  if (result.nextCursor !== undefined && typeof result.nextCursor !== 'string') return 'nextCursor: expected a string'
  for (const [i, tool] of result.tools.entries()) {
    if (!isRecord(tool) || typeof tool.name !== 'string') return `tools.${i}.name: expected a string`
    if (!isRecord(tool.inputSchema) || tool.inputSchema.type !== 'object')
      return `tools.${i}.inputSchema: expected an object schema`
  }
  return undefined
}
