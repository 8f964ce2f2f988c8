// `toolgate serve`'s first listing, before the CLI's bundle and the MCP SDK are loaded: in the common
// case (stdio, one stdio upstream, at most the gateway's own file tools, a 2025-11-25 client),
// the executable's first script reads the client's `initialize` and `tools/list`, runs the
// upstream's handshake and `tools/list` as plain JSON-RPC over the process spawned early, and
// answers both, with the listing made by the same code the gateway lists with. Their load then
// follows the listing instead of delaying it. Anything else it meets (another message, a cursor,
// an error, another version, a deadline) ends it: whatever it did not answer is left to the gateway.
// What it hands on (see raw-first-record.ts): every byte the client sent, which requests were
// answered, and the upstream's recorded handshake, which the upstream connection adopts.
import { PassThrough } from 'node:stream'
import {
  type ClientCapabilities,
  declaredCapabilities,
  handlersForClient,
  importedToolParts,
  listedTool,
  type McpServerFeatures,
  peekEarlySpawn,
  type RawHandshake,
  type ServerCapabilities,
  type SpawnedStdio,
  type Tool,
} from '../mcp/gateway.js'
import { isRecord } from '../util/is-record.js'
import { serverPrefix } from './config.js'
import { earlyCapabilities } from './early-capabilities.js'
import { ownToolsBeforeLoad, withOwnTools } from './raw-first-own.js'
import { rawFirstRecord } from './raw-first-record.js'
import type { GatewaySettings } from './settings.js'

/** The only revision the first listing speaks, both ways; any other is the gateway's to negotiate. */
const REVISION = '2025-11-25'
/** The upstream session's `clientInfo` (the SDK Client's, see legacy-session.ts). */
const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' }
/** The ids of the first listing's own requests to the upstream. */
const INIT_ID = 'toolgate-raw-initialize'
const LIST_ID = 'toolgate-raw-tools-list'
/**
 * How long the first listing may wait for the client and the upstream before the gateway is loaded
 * to do it. Today's path waits for a slow upstream just the same, so waiting costs nothing while
 * the upstream is only slow (on a loaded machine, server-everything took 7 s to list); the bound
 * is for one that never answers, whose listing the gateway then gives up on in its own way.
 */
const DEADLINE_MS = 10_000
/** The longest client line read here (any longer one is the gateway's to read, or refuse). */
const MAX_LINE_BYTES = 1024 * 1024
/** The envelope key of MCP 2026-07-28 that claims a request's protocol version. */
const PROTOCOL_VERSION_CLAIM = 'io.modelcontextprotocol/protocolVersion'

type Settings = Pick<
  GatewaySettings,
  | 'http'
  | 'check'
  | 'files'
  | 'bash'
  | 'mode'
  | 'policy'
  | 'deferAbove'
  | 'auth'
  | 'store'
  | 'servers'
  | 'maxMessageBytes'
  | 'root'
>

/** The one stdio server a config lists, when the first listing can serve it; else undefined. */
function soleServer(
  settings: Settings,
): { name: string; spec: { command: string; args?: string[]; env?: Record<string, string> } } | undefined {
  if (process.platform === 'win32' || settings.http !== undefined || settings.check) return undefined
  if (settings.bash || settings.mode !== 'native') return undefined
  if (Object.keys(settings.policy).length > 0 || settings.deferAbove !== undefined) return undefined
  if (settings.auth !== undefined || settings.store !== undefined) return undefined
  const entries = Object.entries(settings.servers)
  if (entries.length !== 1) return undefined
  const [name, spec] = entries[0] as [string, GatewaySettings['servers'][string]]
  if (!('command' in spec) || spec.sandbox !== undefined || spec.defer !== undefined) return undefined
  return { name, spec }
}

/**
 * Answer the client's first `initialize` and `tools/list` here when the config allows it; resolves
 * once that is done or given up (the CLI's bundle loads then). Undefined when it does not apply.
 * `note` is told which way it went, and why (for a debug log line).
 */
export function listBeforeLoad(
  settings: Settings,
  serverInfo: { name: string; version: string },
  note: (outcome: string) => void = () => {},
): Promise<void> | undefined {
  const server = soleServer(settings)
  if (server === undefined) return void note('not tried: not a config it lists for')
  const own = ownToolsBeforeLoad(settings)
  if ('reason' in own) return void note(`not tried: ${own.reason}`)
  const ownTools = own.tools
  const found = peekEarlySpawn(server.spec)
  const upstream = found?.child.stdin
  if (found === undefined || upstream == null) return void note('not tried: the upstream was not spawned early')
  const spawned: SpawnedStdio = found
  const prefix = serverPrefix(server.name, settings.servers[server.name])
  // Below the transport's own limit, whatever it counts of the line's end.
  const maxLine = Math.min(MAX_LINE_BYTES, (settings.maxMessageBytes ?? MAX_LINE_BYTES) - 2)
  const record = rawFirstRecord()
  const stdin = process.stdin
  const chunks: Buffer[] = []
  let rest = ''
  /** The client's messages so far (blank lines are not messages, as for the gateway's transport). */
  let position = 0
  let clientInit: { id: string | number; position: number } | undefined
  let clientList: { id: string | number; position: number } | undefined
  let features: McpServerFeatures | undefined
  let handshake: RawHandshake | undefined
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
  const toUpstream = (message: object) => upstream.write(`${JSON.stringify(message)}\n`)

  // The upstream's answers to the two requests above are taken here; everything else it says goes
  // on to its connection, in order.
  let resolveInit: (answer: Record<string, unknown> | undefined) => void = () => {}
  const initAnswer = new Promise<Record<string, unknown> | undefined>((resolve) => {
    resolveInit = resolve
  })
  let release = () => {}
  const closed = () => {
    resolveInit(undefined)
    release()
    finish('the upstream closed')
  }
  spawned.child.once('close', closed)
  release = spawned.divert((line) => {
    try {
      return taken(line)
    } catch {
      // What the first listing cannot use is the gateway's to handle.
      finish('an upstream answer it could not read')
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
    if (message.id === INIT_ID) {
      resolveInit(message)
      upstreamInitialized(message)
      return true
    }
    if (message.id === LIST_ID) {
      release()
      spawned.child.off('close', closed)
      upstreamListed(message)
      return true
    }
    return false
  }

  function upstreamInitialized(answer: Record<string, unknown>): void {
    const result = answer.result
    // An initialized server is told so here, whatever comes next; its connection does not repeat it.
    if (isRecord(result) && handshake !== undefined) {
      toUpstream({ jsonrpc: '2.0', method: 'notifications/initialized' })
      handshake.initialized = true
    }
    if (done || !isRecord(result) || result.protocolVersion !== REVISION || !isRecord(result.capabilities)) {
      // The connection adopts whatever came (and handles it); the client is the gateway's.
      release()
      finish('the upstream answered its initialize with an error or another version')
      return
    }
    toUpstream({ jsonrpc: '2.0', id: LIST_ID, method: 'tools/list', params: {} })
    const declared = result.capabilities as ServerCapabilities
    features = {
      resources: declared.resources !== undefined,
      subscribe: declared.resources?.subscribe === true,
      prompts: declared.prompts !== undefined,
      completions: declared.completions !== undefined,
    }
    answerInitialize()
  }

  function upstreamListed(answer: Record<string, unknown>): void {
    const result = answer.result
    if (done || !isRecord(result) || !Array.isArray(result.tools) || result.nextCursor !== undefined) {
      finish("the upstream's tools/list answer was an error or one page of several")
      return
    }
    try {
      tools = withOwnTools(
        ownTools,
        (result.tools as Tool[]).map((tool) => {
          const { description, parameters, meta } = importedToolParts(tool)
          return listedTool(`${prefix}${tool.name}`, description, parameters, meta.imported?.outputSchema, meta)
        }),
      )
    } catch {
      // A tool the gateway would refuse or skip: its own listing says what it serves.
    }
    if (tools === undefined) {
      finish('an upstream tool the gateway would not serve (or serves under another name)')
      return
    }
    answerList()
  }

  function answerInitialize(): void {
    if (done || clientInit === undefined || features === undefined || record.answered !== undefined) return
    const capabilities = earlyCapabilities([features])
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
      handshake = { params: initParams, answer: initAnswer, initialized: false }
      spawned.handshake = handshake
      toUpstream({ jsonrpc: '2.0', id: INIT_ID, method: 'initialize', params: initParams })
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
