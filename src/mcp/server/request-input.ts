// Capability handlers that ask the MCP client of one request (not of a tool call) on that request's
// own stream: what a 2025 client's `prompts/get` hands the upstream link, so that a 2026-07-28
// upstream's input-required answer to it becomes an elicitation, sampling or roots request to that
// client, and the client's answer goes back on the upstream's retry. Each kind is asked only when the
// client declared it, and bounded as the relay bounds a tool call's requests.
import type { McpCapabilityHandlers } from '../protocol/capability-handlers.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { ClientCapabilities } from '../protocol/wire-types.js'

/** The requests an upstream may need answered, by method. */
export type InputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list'

/** Sends one request to the client on the request's stream, with the SDK's result check for `method`. */
export type SendToClient = (
  method: InputMethod,
  params: unknown,
  options: { signal: AbortSignal; timeout: number },
) => Promise<unknown>

/** A person answers elicitations and may be asked before sampling; roots are the client's own. */
const WAIT_MS: Record<InputMethod, number> = {
  'elicitation/create': 10 * 60_000,
  'sampling/createMessage': 10 * 60_000,
  'roots/list': 60_000,
}

/**
 * Handlers for the client of one request: `declared` is what it declared (read when asked),
 * `send` reaches it, `signal` ends with its request.
 */
export function requestInput(
  declared: () => ClientCapabilities | undefined,
  send: SendToClient,
  signal: AbortSignal,
): McpCapabilityHandlers {
  const ask = async <T>(
    method: InputMethod,
    kind: string,
    declares: boolean,
    params: unknown,
    upstream: AbortSignal,
  ) => {
    if (!declares)
      throw {
        code: JsonRpcCode.MethodNotFound,
        message: `the MCP client that made this request did not declare ${kind}`,
      }
    return (await send(method, params, {
      signal: AbortSignal.any([signal, upstream]),
      timeout: WAIT_MS[method],
    })) as T
  }
  const capabilities = () => declared() ?? {}
  return {
    elicitation: (params, context) => {
      const { elicitation } = capabilities()
      // Form mode: declared as `form`, or as the bare `elicitation: {}` of clients before URL mode.
      const form = elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined)
      return ask('elicitation/create', 'the elicitation capability', form, params, context.signal)
    },
    urlElicitation: (params, context) =>
      ask(
        'elicitation/create',
        'URL-mode elicitation',
        capabilities().elicitation?.url !== undefined,
        params,
        context.signal,
      ),
    sampling: (params, context) => {
      const { sampling } = capabilities()
      const declares = sampling !== undefined && (params.tools === undefined || sampling.tools !== undefined)
      return ask('sampling/createMessage', 'the sampling capability', declares, params, context.signal)
    },
    roots: (params, context) =>
      ask('roots/list', 'the roots capability', capabilities().roots !== undefined, params ?? {}, context.signal),
  }
}
