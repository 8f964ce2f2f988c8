// While `toolgate serve` waits for its upstreams' first answers it has nothing to do, and what it
// does right after them pays first-use costs: loading the MCP SDK v2 client (the upstream sessions'
// Client), and its zod schemas, which build their parsers at their first parse. Loading it and
// parsing representative messages with the same schemas while waiting moves that cost off the path.
// Nothing here is registered, emitted or logged: the values parsed are made up and thrown away.
// Over HTTP the port's side is warmed too (httpWarmUps): its modules, and one throwaway session.
import {
  JsonRpcCode,
  loadEventStore,
  loadFastPath,
  loadHttpServerTransport,
  loadStdioServerTransport,
} from '../mcp/gateway.js'

/** The SDK v2 client package, as the checks use it. */
type ClientSdk = typeof import('@modelcontextprotocol/client')
/** The SDK v2 server package, as its check uses it. */
type ServerSdk = typeof import('@modelcontextprotocol/server')

const INPUT_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string', description: 'Text' }, count: { type: 'number', minimum: 0 } },
  required: ['text'],
}

const TOOL = {
  name: 'warm',
  title: 'Warm',
  description: 'A tool as servers list them',
  inputSchema: INPUT_SCHEMA,
  outputSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
  annotations: { readOnlyHint: true, openWorldHint: false },
  execution: { taskSupport: 'optional' },
  _meta: { note: 'warm' },
}

const result = (value: unknown) => ({ jsonrpc: '2.0', id: 1, result: value })

/**
 * One check per message kind the first moments after an upstream answers parse on the gateway's
 * client: its responses (initialize and the three lists). Each says whether every sample parsed as
 * the real messages would (a sample the schemas refuse would warm less than it should).
 */
export const WARM_UP_CHECKS: readonly ((sdk: unknown) => boolean)[] = [
  withSdk((types) => {
    const message = result({
      protocolVersion: types.LATEST_PROTOCOL_VERSION,
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      serverInfo: { name: 'warm', title: 'Warm', version: '1.0.0' },
      instructions: 'warm',
    })
    return (
      types.isJSONRPCResultResponse(message) &&
      !types.isJSONRPCErrorResponse(message) &&
      parses(types.specTypeSchemas.InitializeResult, message.result) &&
      types.isJSONRPCErrorResponse({
        jsonrpc: '2.0',
        id: 1,
        error: { code: JsonRpcCode.MethodNotFound, message: 'warm' },
      })
    )
  }),
  withSdk((types) =>
    parses(types.specTypeSchemas.ListToolsResult, {
      tools: [TOOL, { name: 'plain', inputSchema: { type: 'object' } }],
    }),
  ),
  withSdk(
    (types) =>
      parses(types.specTypeSchemas.ListResourcesResult, {
        resources: [{ uri: 'warm://a', name: 'a', title: 'A', mimeType: 'text/plain', size: 1, annotations: {} }],
      }) &&
      parses(types.specTypeSchemas.ListResourceTemplatesResult, {
        resourceTemplates: [{ uriTemplate: 'warm://{a}', name: 'a', mimeType: 'text/plain' }],
      }) &&
      parses(types.specTypeSchemas.ListPromptsResult, {
        prompts: [{ name: 'warm', description: 'Warm', arguments: [{ name: 'a', required: true }] }],
      }),
  ),
]

/**
 * A first HTTP client's `initialize`, `initialized` and `tools/list`, answered by a throwaway SDK
 * `Server` over an in-memory pair: the server package builds its request schemas and parsers at
 * its first request (≈ 20 ms here), which a first client would otherwise wait for. Resolves to
 * whether both requests were answered as a real session answers them (a result, then an error for
 * the method this server does not serve); the server is closed either way.
 */
export async function serverWarmUp(sdk: ServerSdk): Promise<boolean> {
  const [serverSide, clientSide] = sdk.InMemoryTransport.createLinkedPair()
  const server = new sdk.Server({ name: 'warm', version: '0.0.0' }, { capabilities: {} })
  const answers = new Map<unknown, Record<string, unknown>>()
  const both = new Promise<void>((resolve) => {
    clientSide.onmessage = (message) => {
      if ('id' in message) answers.set(message.id, message as unknown as Record<string, unknown>)
      if (answers.size === 2) resolve()
    }
  })
  try {
    await server.connect(serverSide)
    await clientSide.start()
    await clientSide.send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: { form: {} }, roots: { listChanged: true }, sampling: {} },
        clientInfo: { name: 'warm', version: '1.0.0' },
      },
    })
    await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
    await both
    return answers.get(0)?.result !== undefined && answers.get(1)?.error !== undefined
  } finally {
    await server.close()
  }
}

/** Whether `schema` accepts `value` (the SDK's schemas are Standard Schemas). */
function parses(schema: { '~standard': { validate(value: unknown): unknown } }, value: unknown): boolean {
  const result = schema['~standard'].validate(value) as { issues?: unknown }
  return !(result instanceof Promise) && result.issues === undefined
}

/** A check on the SDK v2 client package (its type stays out of this module's declarations). */
function withSdk(check: (types: ClientSdk) => boolean): (sdk: unknown) => boolean {
  return (sdk) => check(sdk as ClientSdk)
}

/** The steps `serve` runs while idle: load the SDK v2 client, then {@link WARM_UP_CHECKS} one by one. */
export function warmUps(): readonly (() => unknown)[] {
  let sdk: ClientSdk | undefined
  return [
    async () => {
      sdk = await import('@modelcontextprotocol/client')
    },
    ...WARM_UP_CHECKS.map((check) => () => sdk !== undefined && check(sdk)),
  ]
}

/**
 * The steps `serve --http` runs while its upstreams boot: {@link warmUps}, then one load per step of
 * what opening the port needs right after the upstreams answer (the SDK v2 server package, the
 * metrics' prom-client, the HTTP session code), with {@link serverWarmUp} after the server package.
 * Each is loaded later anyway, before the port opens; loaded here, that happens while the process
 * would otherwise wait. Loading runs no check and opens nothing: the guard, the metrics and the
 * listener are made where they always were.
 */
export function httpWarmUps(): readonly (() => unknown)[] {
  let serverSdk: ServerSdk | undefined
  return [
    ...warmUps(),
    async () => {
      serverSdk = await import('@modelcontextprotocol/server')
    },
    // The first client's requests, answered once here: the server side's parsers are built now
    // rather than on that client's clock.
    () => serverSdk !== undefined && serverWarmUp(serverSdk),
    () => import('prom-client'),
    () => loadHttpServerTransport(),
    () => Promise.all([loadStdioServerTransport(), loadEventStore(), loadFastPath()]),
    () => Promise.all([import('./serve-ops.js'), import('./serve-http.js'), import('./drain.js')]),
  ]
}

/**
 * Run `steps` one per turn of the event loop (after whatever I/O is waiting), until `stop()` is
 * called or they are done; a step that returns a promise is waited for. Returns `stop`.
 */
export function warmWhileIdle(steps: readonly (() => unknown)[] = warmUps()): () => void {
  let next = 0
  let timer: NodeJS.Immediate | undefined
  const schedule = () => {
    if (next < steps.length) timer = setImmediate(run)
  }
  const run = () => {
    timer = undefined
    const step = steps[next++]
    if (step === undefined) return
    let pending: unknown
    try {
      pending = step()
    } catch {
      // A warm-up that fails warms nothing; serving is unaffected.
    }
    if (pending instanceof Promise) pending.then(schedule, schedule)
    else timer = setImmediate(run)
  }
  timer = setImmediate(run)
  return () => {
    next = steps.length
    if (timer !== undefined) clearImmediate(timer)
    timer = undefined
  }
}
