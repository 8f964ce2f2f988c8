// `toolgate serve`'s first listing, before the CLI's bundle and the MCP SDK are loaded: in the common
// case (stdio, stdio upstreams all spawned early, at most the gateway's own file tools, a
// 2025-11-25 client), the executable's first script reads the client's `initialize` and
// `tools/list`, runs every upstream's handshake and `tools/list` at once as plain JSON-RPC over the
// processes spawned early (raw-first-upstream.ts), and answers both, with the listing made by the
// same code the gateway lists with, in the gateway's order (its own tools, then each upstream's in
// the config's order). Their load then
// follows the listing instead of delaying it. Anything else it meets (another message, a cursor,
// an error, another version, a tool name two servers share or a resource or prompt they may
// share, a deadline) ends it: whatever it did not answer is left to the gateway.
// What it hands on (see raw-first-record.ts): every byte the client sent, which requests were
// answered, and each upstream's recorded handshake, which its connection adopts.
import { PassThrough } from 'node:stream'
import {
  type ClientCapabilities,
  declaredCapabilities,
  handlersForClient,
  type ServerCapabilities,
  type Tool,
} from '../mcp/gateway.js'
import { isRecord } from '../util/is-record.js'
import {
  CLIENT_INFO,
  type ListingSettings,
  PROTOCOL_VERSION_CLAIM,
  REVISION,
  upstreamListing,
} from './raw-first-listing.js'
import { rawFirstRecord } from './raw-first-record.js'

/**
 * How long the first listing may wait for the client and the upstream before the gateway is loaded
 * to do it. Today's path waits for a slow upstream just the same, so waiting costs nothing while
 * the upstream is only slow (on a loaded machine, server-everything took 7 s to list); the bound
 * is for one that never answers, whose listing the gateway then gives up on in its own way.
 */
const DEADLINE_MS = 10_000
/** The longest client line read here (any longer one is the gateway's to read, or refuse). */
const MAX_LINE_BYTES = 1024 * 1024

/**
 * Answer the client's first `initialize` and `tools/list` here when the config allows it; resolves
 * once that is done or given up (the CLI's bundle loads then). Undefined when it does not apply.
 * `note` is told which way it went, and why (for a debug log line).
 */
export function listBeforeLoad(
  settings: ListingSettings,
  serverInfo: { name: string; version: string },
  note: (outcome: string) => void = () => {},
): Promise<void> | undefined {
  const maxLine = Math.min(MAX_LINE_BYTES, (settings.maxMessageBytes ?? MAX_LINE_BYTES) - 2)
  const record = rawFirstRecord()
  const stdin = process.stdin
  const chunks: Buffer[] = []
  let rest = ''
  /** The client's messages so far (blank lines are not messages, as for the gateway's transport). */
  let position = 0
  let clientInit: { id: string | number; position: number } | undefined
  let clientList: { id: string | number; position: number } | undefined
  /** What the gateway will declare, once every upstream answered its initialize. */
  let capabilities: ServerCapabilities | undefined
  let tools: Tool[] | undefined
  let stdinEnded = false
  /** The method of the client's last message (for the log), or what the line was instead. */
  let last = 'not JSON-RPC'
  let done = false
  let resolveDone = () => {}
  const finished = new Promise<void>((resolve) => {
    resolveDone = resolve
  })

  const write = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`)

  const listing = upstreamListing(settings, 'stdio', {
    ended: () => done,
    declared(declared) {
      capabilities = declared
      answerInitialize()
    },
    listed(listed) {
      tools = listed
      answerList()
    },
    failed: (why) => finish(why),
  })
  if ('reason' in listing) return void note(`not tried: ${listing.reason}`)
  const upstreams = listing

  function answerInitialize(): void {
    if (done || clientInit === undefined || record.answered !== undefined || capabilities === undefined) return
    write({
      jsonrpc: '2.0',
      id: clientInit.id,
      result: { protocolVersion: REVISION, capabilities, serverInfo: { ...serverInfo } },
    })
    record.answered = { initialize: clientInit.position }
    answerList()
  }

  function answerList(): void {
    const answered = record.answered
    if (done || answered === undefined || clientList === undefined || tools === undefined) return
    write({ jsonrpc: '2.0', id: clientList.id, result: { tools } })
    record.answered = { ...answered, list: clientList.position, tools: JSON.stringify(tools) }
    finish(`answered (${tools.length} tools)`)
  }

  /** One message of the client's: read on, or give up here. */
  function message(line: string): boolean {
    last = 'not JSON-RPC'
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      return false
    }
    if (!isRecord(value) || value.jsonrpc !== '2.0' || typeof value.method !== 'string') return false
    last = JSON.stringify(value.method.slice(0, 40))
    const at = position++
    const id = value.id
    const params = value.params
    if (at === 0) {
      if (value.method !== 'initialize' || (typeof id !== 'string' && typeof id !== 'number')) return false
      if (!isRecord(params) || params.protocolVersion !== REVISION || !isRecord(params.capabilities)) return false
      if (isRecord(params._meta) && PROTOCOL_VERSION_CLAIM in params._meta) return false
      const info = params.clientInfo
      if (!isRecord(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return false
      clientInit = { id, position: at }
      // What the gateway declares to its upstreams is what its client declared (see gateway.ts).
      const standIn = async () => ({}) as never
      const handlers = handlersForClient(
        { elicitation: standIn, urlElicitation: standIn, sampling: standIn, roots: standIn },
        params.capabilities as ClientCapabilities,
      )
      const initParams = {
        protocolVersion: REVISION,
        capabilities: declaredCapabilities(handlers),
        clientInfo: CLIENT_INFO,
      }
      upstreams.initialize(initParams)
      return true
    }
    if (value.method === 'notifications/initialized' && !('id' in value) && clientList === undefined) return true
    if (
      value.method === 'tools/list' &&
      clientList === undefined &&
      (typeof id === 'string' || typeof id === 'number')
    ) {
      if (params !== undefined && (!isRecord(params) || Object.keys(params).length > 0)) return false
      clientList = { id, position: at }
      answerList()
      return true
    }
    return false
  }

  /** A message read on, or false: given up here, a throw included (the gateway's checks then answer it). */
  const readable = (line: string): boolean => {
    try {
      return message(line)
    } catch {
      return false
    }
  }

  const onData = (chunk: Buffer) => {
    chunks.push(chunk)
    if (done) return
    rest += chunk.toString('utf8')
    for (;;) {
      const newline = rest.indexOf('\n')
      if (newline === -1) break
      const line = rest.slice(0, newline).replace(/\r$/, '')
      rest = rest.slice(newline + 1)
      if (Buffer.byteLength(line) > maxLine || (line.trim() !== '' && !readable(line))) {
        finish(`a client message it does not answer first (${last})`)
        return
      }
      if (done) return
    }
    if (Buffer.byteLength(rest) > maxLine) finish(`a client line over ${maxLine} bytes`)
  }
  const onEnd = () => {
    stdinEnded = true
    finish("the client's stdin ended")
  }

  function finish(why: string): void {
    if (done) return
    done = true
    const answered =
      record.answered === undefined ? '' : record.answered.list === undefined ? ', initialize answered' : ''
    note(
      `${why.startsWith('answered') ? why : `left to the gateway${answered}: ${why}`}, at ${Math.round(performance.now())} ms`,
    )
    clearTimeout(deadline)
    stdin.off('data', onData)
    stdin.off('end', onEnd)
    stdin.pause()
    // Every byte read here is read again by the gateway's transport, first.
    const handed = new PassThrough()
    if (chunks.length > 0) handed.write(Buffer.concat(chunks))
    if (stdinEnded) handed.end()
    else stdin.pipe(handed)
    record.stdin = handed
    resolveDone()
  }

  const deadline = setTimeout(() => finish(`no listing within ${DEADLINE_MS} ms`), DEADLINE_MS)
  stdin.on('data', onData)
  stdin.on('end', onEnd)
  return finished
}
