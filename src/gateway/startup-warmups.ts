// While `toolgate serve` waits for its upstreams' first answers it has nothing to do, and what it
// does right after them pays first-use costs: the MCP SDK's zod schemas generate their parsers at
// their first parse. Parsing representative messages with the same schemas while waiting moves
// that cost off the path. Nothing here is registered, emitted or logged: the values parsed are
// made up and thrown away.
import * as types from '@modelcontextprotocol/sdk/types.js'
import { JsonRpcCode } from '../mcp/jsonrpc-codes.js'

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
 * One step per message kind the first moments after an upstream answers parse: its responses
 * (initialize and the three lists) on the gateway's client, and the client's requests and
 * notifications on the gateway's server. Each says whether every sample parsed as the real
 * messages would (a sample the schemas refuse would warm less than it should).
 */
export const WARM_UPS: readonly (() => boolean)[] = [
  () => {
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
      types.InitializeResultSchema.safeParse(message.result).success &&
      types.isJSONRPCErrorResponse({
        jsonrpc: '2.0',
        id: 1,
        error: { code: JsonRpcCode.MethodNotFound, message: 'warm' },
      })
    )
  },
  () =>
    types.ListToolsResultSchema.safeParse({ tools: [TOOL, { name: 'plain', inputSchema: { type: 'object' } }] })
      .success,
  () =>
    types.ListResourcesResultSchema.safeParse({
      resources: [{ uri: 'warm://a', name: 'a', title: 'A', mimeType: 'text/plain', size: 1, annotations: {} }],
    }).success &&
    types.ListResourceTemplatesResultSchema.safeParse({
      resourceTemplates: [{ uriTemplate: 'warm://{a}', name: 'a', mimeType: 'text/plain' }],
    }).success &&
    types.ListPromptsResultSchema.safeParse({
      prompts: [{ name: 'warm', description: 'Warm', arguments: [{ name: 'a', required: true }] }],
    }).success,
  () => {
    const request = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }
    const notification = { jsonrpc: '2.0', method: 'notifications/initialized' }
    // The server asks of every request's params whether they may ask for a task (any object may);
    // the first params it is handed are the client's initialize's.
    const initialize = {
      protocolVersion: types.LATEST_PROTOCOL_VERSION,
      capabilities: { roots: { listChanged: true } },
      clientInfo: { name: 'warm', version: '1.0.0' },
    }
    return (
      types.isTaskAugmentedRequestParams(initialize) &&
      !types.isJSONRPCResultResponse(request) &&
      !types.isJSONRPCErrorResponse(request) &&
      types.isJSONRPCRequest(request) &&
      types.isJSONRPCNotification(notification) &&
      types.ListToolsRequestSchema.safeParse(request).success &&
      types.InitializedNotificationSchema.safeParse(notification).success
    )
  },
]

/**
 * Run `steps` one per turn of the event loop (after whatever I/O is waiting), until `stop()` is
 * called or they are done. Returns `stop`.
 */
export function warmWhileIdle(steps: readonly (() => unknown)[] = WARM_UPS): () => void {
  let next = 0
  let timer: NodeJS.Immediate | undefined
  const run = () => {
    timer = undefined
    const step = steps[next++]
    if (step === undefined) return
    try {
      step()
    } catch {
      // A warm-up that fails warms nothing; serving is unaffected.
    }
    timer = setImmediate(run)
  }
  timer = setImmediate(run)
  return () => {
    next = steps.length
    if (timer !== undefined) clearImmediate(timer)
    timer = undefined
  }
}
