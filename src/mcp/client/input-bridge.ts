// A 2026-07-28 client's tool call over a 2025-11-25 upstream session: when the upstream asks its
// client (elicitation, sampling, roots) during the call, the 2026 client cannot be asked on a held
// stream, so the question ends the client's round as an input-required result and the upstream's
// request waits here, in memory, with its call still running upstream. The retry brings the answer:
// it goes to the upstream's request, and the call goes on to its result (or its next question).
// A question nobody answers in time is refused to the upstream and its call cancelled.

import { randomBytes } from 'node:crypto'
import type { ToolExecution } from '../../contract/execution.js'
import type { McpCapabilityHandlers, McpRequestContext, McpSamplingHandler } from '../protocol/capability-handlers.js'
import type { ModernCall } from '../protocol/era-call.js'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { CallToolResult } from '../protocol/wire-types.js'
import { declaredCapabilities, samplingWithTools } from './capabilities.js'

/** The key of the upstream's question in the input-required result's `inputRequests`. */
export const UPSTREAM_INPUT = 'toolgate/upstream-input'
/** How long an upstream's question waits for the retry by default (a person answers). */
export const HELD_INPUT_MS = 10 * 60_000
/** Held questions at most per upstream; past this a new one is refused to the upstream. */
const MAX_HELD = 1000

/** An upstream's request to its client, waiting for a 2026 client's retry. */
interface Question {
  readonly method: string
  readonly params: unknown
  answer(value: unknown): void
  fail(error: { code: number; message: string }): void
  /** Put to the client already (a round ended with it). */
  put: boolean
  timer?: ReturnType<typeof setTimeout>
}

/** One upstream call of a 2026 client, running across rounds. */
interface Bridge {
  readonly tool: string
  readonly pending: Promise<CallToolResult>
  readonly abort: AbortController
  /** What the 2026 client declared: it is asked only for that. */
  readonly capabilities: Record<string, unknown>
  question?: Question
  /** The round waiting now, told of a new question. */
  wake?: () => void
}

/** Refusals the bridge gives a retry, said plainly. */
export type BridgeRefusal = { readonly code: number; readonly message: string }

/** The questions of one upstream link's 2026 clients, and the capability handlers that hold them. */
export class UpstreamInputBridge {
  /** Bridges by the execution that started the upstream call (what the handlers' context names). */
  private readonly running = new Map<ToolExecution, Bridge>()
  /** Bridges whose question waits for a retry, by the key the sealed state carries. */
  private readonly held = new Map<string, Bridge>()

  constructor(
    private readonly label: string,
    private readonly waitMs = HELD_INPUT_MS,
  ) {}

  /**
   * `handlers`, each first holding a request that comes during a 2026 client's call; the others
   * go on to the given handler. Declares the same capabilities.
   */
  wrap(handlers: McpCapabilityHandlers): McpCapabilityHandlers {
    const hold = <P, R>(method: string, handler: ((params: P, context: McpRequestContext) => R) | undefined) =>
      handler &&
      ((params: P, context: McpRequestContext): R => {
        const bridge = this.bridgeOf(context)
        return bridge === undefined ? handler(params, context) : (this.ask(bridge, method, params) as R)
      })
    const sampling = hold('sampling/createMessage', handlers.sampling)
    return {
      elicitation: hold('elicitation/create', handlers.elicitation),
      urlElicitation: hold('elicitation/create', handlers.urlElicitation),
      sampling:
        sampling && declaredCapabilities(handlers).sampling?.tools !== undefined
          ? samplingWithTools(sampling as McpSamplingHandler)
          : sampling,
      roots: hold('roots/list', handlers.roots),
    }
  }

  /**
   * One round of a 2026 client's call: the upstream call starts (`start`, first round) or the held
   * question gets the retry's answer (`call.resume`); the call's result, or `held` with the new
   * question left on `call`, or `refused` with the reason left on `call.rpcError` (a retry this
   * bridge does not hold).
   */
  async round(
    exec: ToolExecution,
    tool: string,
    call: ModernCall,
    signal: AbortSignal,
    start: (signal: AbortSignal) => Promise<CallToolResult>,
  ): Promise<{ result: CallToolResult } | { held: string } | { refused: string }> {
    let bridge: Bridge
    const resume = call.resume
    if (resume !== undefined) {
      const found = this.held.get(resume.key)
      if (found === undefined || found.tool !== tool || found.question === undefined) {
        call.rpcError = {
          code: JsonRpcCode.InvalidParams,
          message:
            `tools/call: the question of MCP server ${this.label} this retry answers is not held here ` +
            '(answered already, expired, or held by another gateway instance); call the tool again',
        }
        return { refused: call.rpcError.message }
      }
      this.held.delete(resume.key)
      bridge = found
      const question = found.question
      found.question = undefined
      clearTimeout(question.timer)
      const answer = resume.inputResponses[UPSTREAM_INPUT]
      if (answer === undefined)
        question.fail({
          code: JsonRpcCode.InvalidParams,
          message: `the MCP client gave no answer (inputResponses.${UPSTREAM_INPUT})`,
        })
      else question.answer(answer)
    } else {
      const abort = new AbortController()
      // Until the first question is held the client's cancellation is the upstream call's; after,
      // the call outlives the round, bounded by the wait.
      const cancel = () => abort.abort(signal.reason)
      signal.addEventListener('abort', cancel, { once: true })
      const pending = start(abort.signal)
      bridge = { tool, pending, abort, capabilities: call.clientCapabilities }
      this.running.set(exec, bridge)
      const done = () => {
        signal.removeEventListener('abort', cancel)
        this.running.delete(exec)
      }
      pending.then(done, done)
    }
    const outcome = await new Promise<{ result: CallToolResult } | { question: Question }>((resolve, reject) => {
      const check = () => {
        const question = bridge.question
        if (question !== undefined && !question.put) resolve({ question })
      }
      bridge.wake = check
      bridge.pending.then((result) => resolve({ result }), reject)
      check()
    }).finally(() => {
      bridge.wake = undefined
    })
    if ('result' in outcome) return outcome
    const { question } = outcome
    question.put = true
    const key = randomBytes(16).toString('base64url')
    this.held.set(key, bridge)
    question.timer = setTimeout(() => this.expire(key), this.waitMs)
    question.timer.unref?.()
    call.held = { key, inputRequests: { [UPSTREAM_INPUT]: { method: question.method, params: question.params } } }
    return { held: `MCP server ${this.label} asked for input; the MCP client answers it by retrying` }
  }

  /** Refuse every held question and cancel its call (the link closes). */
  close(): void {
    for (const key of [...this.held.keys()]) this.expire(key, 'the connection to the server closed')
  }

  private bridgeOf(context: McpRequestContext): Bridge | undefined {
    for (const exec of context.calls) {
      const bridge = this.running.get(exec)
      if (bridge !== undefined) return bridge
    }
    return undefined
  }

  private ask(bridge: Bridge, method: string, params: unknown): Promise<unknown> {
    const refused = undeclared(method, bridge.capabilities)
    if (refused !== undefined) return Promise.reject(refused)
    if (bridge.question !== undefined)
      return Promise.reject(rpc(JsonRpcCode.InternalError, 'one question at a time is put to an MCP 2026-07-28 client'))
    if (this.held.size >= MAX_HELD)
      return Promise.reject(rpc(JsonRpcCode.InternalError, 'too many questions wait for MCP clients; ask again later'))
    return new Promise((resolve, reject) => {
      bridge.question = { method, params, answer: resolve, fail: (error) => reject(error), put: false }
      bridge.wake?.()
    })
  }

  private expire(key: string, why?: string): void {
    const bridge = this.held.get(key)
    if (bridge === undefined) return
    this.held.delete(key)
    const question = bridge.question
    bridge.question = undefined
    clearTimeout(question?.timer)
    question?.fail(
      rpc(
        JsonRpcCode.RequestTimeout,
        why ?? `the MCP client did not answer the ${question.method} request within ${this.waitMs} ms`,
      ),
    )
    bridge.abort.abort(why ?? 'the MCP client did not answer in time')
    bridge.pending.catch(() => {})
  }
}

function rpc(code: number, message: string): { code: number; message: string } {
  return { code, message }
}

/** Whether the 2026 client declared what `method` needs, else the error the upstream gets. */
function undeclared(method: string, capabilities: Record<string, unknown>): BridgeRefusal | undefined {
  const need = method === 'elicitation/create' ? 'elicitation' : method === 'roots/list' ? 'roots' : 'sampling'
  if (capabilities[need] !== undefined) return undefined
  return rpc(JsonRpcCode.MethodNotFound, `the MCP client that made this call did not declare the ${need} capability`)
}
