// The served `tools/call` without the SDK's request machinery: a plain call (not a task) with
// well-formed params is answered here, the way the SDK's handler path would answer it, so a relayed
// call costs no zod parse of the request and result, no per-request closures of the Protocol and
// no extra promise chain. Everything else (a task, odd params, a message before initialization)
// is left to the SDK, whose answers stay the reference.

import { ProtocolError, specTypeSchemas } from '@modelcontextprotocol/server'
import { isRecord } from '../../util/is-record.js'
import { isCommonCallToolResult } from '../protocol/common-call-result.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import { type CallTrace, callTraceOf } from '../protocol/trace-context.js'
import type { AuthInfo, CallToolResult, JSONRPCMessage, RequestId } from '../protocol/wire-types.js'
import type { McpCallChannel } from './client-directory.js'
import type { FastPath, FastPathExtra } from './fast-path.js'
import { type CallParams, PROGRAM_META } from './serve-tools.js'
import { RELATED_TASK_META_KEY } from './server-tasks.js'

// Read at the first result that needs it: reading it at load would load the SDK with this module.
let callToolResultSchema: (typeof specTypeSchemas.CallToolResult)['~standard'] | undefined

/** What the fast path asks of the session it serves. */
export interface FastCallSession {
  /** Whether the client has initialized (before that the SDK's own handling decides). */
  initialized(): boolean
  /** Send a notification on the stream of the request `relatedRequestId`. */
  notify(notification: FastProgressNotification, relatedRequestId: RequestId): Promise<void>
  /** A failure with nobody to answer (a response that could not be sent). */
  onerror(error: Error): void
}

/** A progress notification, as the SDK's `extra.sendNotification` takes it. */
export type FastProgressNotification = {
  method: 'notifications/progress'
  params: { progressToken: string | number; progress: number; total?: number; message?: string }
}

/** What createMcpServer lends the fast path: the same steps its SDK handler takes. */
export interface FastCallHost {
  readonly server: FastCallSession
  /** The next call id of the session. */
  nextCallId(): string
  /** Run one call (the SDK handler's own runner). */
  run(
    params: CallParams,
    callId: string,
    signal: AbortSignal,
    send: McpCallChannel['send'],
    authInfo: AuthInfo | undefined,
  ): Promise<CallToolResult>
  /** Route the call's progress to the client under `token` (until `endProgress`). */
  startProgress(
    callId: string,
    token: string | number,
    send: (notification: FastProgressNotification) => Promise<void>,
  ): void
  endProgress(callId: string): void
}

/** The fast path of one served session; `close()` ends its calls as the SDK ends its handlers. */
export interface FastCalls extends FastPath {
  close(): void
}

const isToken = (value: unknown): value is string | number =>
  typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))

/**
 * The params of a plain `tools/call` the SDK's schema certainly accepts, with the progress token
 * it would read; undefined when the SDK should look at the request itself.
 */
function plainCallParams(params: unknown):
  | {
      name: string
      arguments?: Record<string, unknown>
      token: string | number | undefined
      trace: CallTrace | undefined
    }
  | undefined {
  if (!isRecord(params) || typeof params.name !== 'string') return undefined
  if (params.task !== undefined) return undefined
  const args = params.arguments
  if (args !== undefined && !isRecord(args)) return undefined
  const meta = params._meta
  let token: string | number | undefined
  let trace: CallTrace | undefined
  if (meta !== undefined) {
    if (!isRecord(meta) || meta[RELATED_TASK_META_KEY] !== undefined) return undefined
    // A named program is for the keeper, which only the SDK path hands the name to.
    if (meta[PROGRAM_META] !== undefined) return undefined
    token = meta.progressToken as string | number | undefined
    if (token !== undefined && !isToken(token)) return undefined
    // The caller's trace context, whole: the call's span joins the same parent as on the SDK's path.
    trace = callTraceOf(meta)
  }
  return { name: params.name, ...(args === undefined ? {} : { arguments: args }), token, trace }
}

/** The result as the SDK's tools/call wrapper returns it, or its error for a result that fails the schema. */
function checkedResult(result: CallToolResult): CallToolResult {
  if (isCommonCallToolResult(result)) return result
  callToolResultSchema ??= specTypeSchemas.CallToolResult['~standard']
  const parsed = callToolResultSchema.validate(result)
  if (parsed.issues === undefined) return parsed.value as CallToolResult
  throw new ProtocolError(
    JsonRpcCode.InvalidParams,
    `Invalid tools/call result: ${JSON.stringify(parsed.issues, null, 2)}`,
  )
}

/** The error response the SDK's Protocol sends for a handler's failure. */
function errorResponse(id: RequestId, error: unknown): JSONRPCMessage {
  const e = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown }
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isSafeInteger(e.code) ? (e.code as number) : JsonRpcCode.InternalError,
      message: (e.message as string | undefined) ?? 'Internal error',
      ...(e.data !== undefined && { data: e.data }),
    },
  } as JSONRPCMessage
}

/** The fast path for a server made by createMcpServer. */
export function createFastCalls(host: FastCallHost): FastCalls {
  const { server } = host
  /** The calls this path answers, by request id: their abort controllers. */
  const running = new Map<RequestId, AbortController>()

  const call = (
    id: RequestId,
    params: NonNullable<ReturnType<typeof plainCallParams>>,
    extra: FastPathExtra,
    reply: (response: JSONRPCMessage) => Promise<void>,
  ): void => {
    const controller = new AbortController()
    running.set(id, controller)
    const { signal } = controller
    const callId = host.nextCallId()
    const { token } = params
    if (token !== undefined)
      host.startProgress(callId, token, async (notification) => {
        if (signal.aborted) return
        await server.notify(notification, id)
      })
    // As the SDK handler's channel: the client's requests are related to the call's request.
    const send: McpCallChannel['send'] = (request) => request({ relatedRequestId: id })
    const args: CallParams = {
      name: params.name,
      ...(params.arguments === undefined ? {} : { arguments: params.arguments }),
      ...params.trace,
    }
    host
      .run(args, callId, signal, send, extra.authInfo)
      .then(checkedResult)
      .then(
        (result) => {
          if (signal.aborted) return
          return reply({ result, jsonrpc: '2.0', id } as JSONRPCMessage)
        },
        (error) => {
          if (signal.aborted) return
          return reply(errorResponse(id, error))
        },
      )
      .catch((error) => server.onerror(new Error(`Failed to send response: ${error}`)))
      .finally(() => {
        if (token !== undefined) host.endProgress(callId)
        if (running.get(id) === controller) running.delete(id)
      })
  }

  return {
    take(message, extra, reply) {
      const m = message as { method?: unknown; id?: unknown; params?: unknown }
      if (m.method === 'tools/call' && m.id !== undefined) {
        // Before initialization the SDK's own handling decides (the client's capabilities are unknown).
        if (!server.initialized()) return false
        const params = plainCallParams(m.params)
        if (params === undefined) return false
        call(m.id as RequestId, params, extra, reply)
        return true
      }
      if (m.method === 'notifications/cancelled' && m.id === undefined && isRecord(m.params)) {
        // The SDK ignores a cancellation without a (truthy) request id, and so does this path.
        const { requestId, reason } = m.params
        if ((typeof requestId === 'string' || typeof requestId === 'number') && requestId)
          if (reason === undefined || typeof reason === 'string') running.get(requestId)?.abort(reason)
        // The SDK sees it too: a request it handles under that id is its own to cancel.
        return false
      }
      return false
    },
    close() {
      // As the SDK's close: every call still running is aborted and answers nothing more.
      for (const controller of running.values()) controller.abort()
      running.clear()
    },
  }
}
