// One upstream of `serve`'s first listing (raw-first.ts): its `initialize` and `tools/list` run as
// plain JSON-RPC over the process spawned early, its answers taken from its output before its
// connection reads it, and the handshake recorded on the process for that connection to adopt
// (raw-handshake.ts). Whatever the listing as a whole does, the upstream is left consistent: told
// `notifications/initialized` once it answered, never asked to `initialize` twice, and every line
// it writes that is not an answer to these two requests goes on to its connection, in order.
import type { Writable } from 'node:stream'
import {
  importedToolParts,
  isInitializeResult,
  listedTool,
  type McpServerFeatures,
  type RawHandshake,
  type ServerCapabilities,
  type SpawnedStdio,
  type Tool,
} from '../mcp/gateway.js'
import { isRecord } from '../util/is-record.js'

/** The ids of the first listing's own requests to the upstream. */
const INIT_ID = 'toolgate-raw-initialize'
const LIST_ID = 'toolgate-raw-tools-list'

/** What an upstream tells the listing it serves. */
export interface RawUpstreamEvents {
  /** Whether the listing is over (given up or done): what comes after is only tidied up. */
  ended(): boolean
  /** Its `initialize` answer passed: what it declared. */
  initialized(features: McpServerFeatures): void
  /** Its one page of tools, as the gateway lists them (prefixed). */
  listed(tools: Tool[]): void
  /** It cannot be listed here (an error, a cursor, another version, a malformed answer, its end): why. */
  failed(why: string): void
}

export interface RawUpstream {
  /** Send its `initialize` with these params (once). */
  initialize(params: Readonly<Record<string, unknown>>): void
}

/** Start taking `spawned`'s answers to the first listing's requests. */
export function rawUpstream(
  spawned: SpawnedStdio,
  upstream: Writable,
  prefix: string,
  revision: string,
  events: RawUpstreamEvents,
): RawUpstream {
  const toUpstream = (message: object) => upstream.write(`${JSON.stringify(message)}\n`)
  let handshake: RawHandshake | undefined
  let resolveInit: (answer: Record<string, unknown> | undefined) => void = () => {}
  const initAnswer = new Promise<Record<string, unknown> | undefined>((resolve) => {
    resolveInit = resolve
  })
  let release = () => {}
  const closed = () => {
    resolveInit(undefined)
    release()
    events.failed('an upstream closed')
  }
  spawned.child.once('close', closed)
  release = spawned.divert((line) => {
    try {
      return taken(line)
    } catch {
      // What the first listing cannot use is the gateway's to handle.
      events.failed('an upstream answer it could not read')
      return false
    }
  })

  function taken(line: string): boolean {
    if (!line.includes('"toolgate-raw-')) return false
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      return false
    }
    if (!isRecord(message) || 'method' in message) return false
    if (message.id === INIT_ID && handshake !== undefined) {
      resolveInit(message)
      initialized(message)
      return true
    }
    if (message.id === LIST_ID) {
      release()
      spawned.child.off('close', closed)
      listed(message)
      return true
    }
    return false
  }

  function initialized(answer: Record<string, unknown>): void {
    const result = answer.result
    // An initialized server is told so here, whatever comes next; its connection does not repeat it.
    if (isRecord(result) && handshake !== undefined) {
      toUpstream({ jsonrpc: '2.0', method: 'notifications/initialized' })
      handshake.initialized = true
    }
    // The SDK client would refuse an answer of another shape: its connection adopts it and says so.
    if (events.ended() || !isInitializeResult(result, revision)) {
      release()
      events.failed('an upstream answered its initialize with an error, another version or another shape')
      return
    }
    toUpstream({ jsonrpc: '2.0', id: LIST_ID, method: 'tools/list', params: {} })
    const declared = (result as { capabilities: ServerCapabilities }).capabilities
    events.initialized({
      resources: declared.resources !== undefined,
      subscribe: declared.resources?.subscribe === true,
      prompts: declared.prompts !== undefined,
      completions: declared.completions !== undefined,
    })
  }

  function listed(answer: Record<string, unknown>): void {
    const result = answer.result
    if (events.ended() || !isRecord(result) || !Array.isArray(result.tools) || result.nextCursor !== undefined) {
      events.failed("an upstream's tools/list answer was an error or one page of several")
      return
    }
    const listed = result.tools as Tool[]
    // A name the gateway would not register (see the connection's syncTool) is its to report.
    if (listed.some((tool) => typeof tool?.name !== 'string' || tool.name.includes('\u0000'))) {
      events.failed('an upstream tool name the gateway would not register')
      return
    }
    let tools: Tool[]
    try {
      tools = listed.map((tool) => {
        const { description, parameters, meta } = importedToolParts(tool)
        return listedTool(`${prefix}${tool.name}`, description, parameters, meta.imported?.outputSchema, meta)
      })
    } catch {
      // A tool the gateway would refuse or skip: its own listing says what it serves.
      events.failed('an upstream tool the gateway would not serve as listed')
      return
    }
    events.listed(tools)
  }

  return {
    initialize(params) {
      if (handshake !== undefined) return
      handshake = { params, answer: initAnswer, initialized: false }
      spawned.handshake = handshake
      toUpstream({ jsonrpc: '2.0', id: INIT_ID, method: 'initialize', params })
    },
  }
}
