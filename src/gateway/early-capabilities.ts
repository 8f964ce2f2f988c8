// What the gateway declares to its client, known before its MCP server exists: the startup gate
// and the CLI's first listing both answer the client's `initialize` with it.
import { type McpServerFeatures, type ServerCapabilities, TASKS_CAPABILITY } from '../mcp/gateway.js'

/**
 * What `createMcpServer` declares for the gateway (tools, logging, tasks) with the catalog parts
 * the gateway serves: each of resources, subscriptions, prompts and completions when some upstream
 * declared it, or has not answered (is down) and may. `undefined` in `upstreams` is an upstream
 * that is down. Kept equal to what the server made later declares; a test compares the two.
 */
export function earlyCapabilities(upstreams: readonly (McpServerFeatures | undefined)[]): ServerCapabilities {
  const offered = (feature: keyof McpServerFeatures) => upstreams.some((f) => f === undefined || f[feature])
  const capabilities: ServerCapabilities = { tools: { listChanged: true }, logging: {}, tasks: TASKS_CAPABILITY }
  const resources = offered('resources')
  const prompts = offered('prompts')
  const completions = offered('completions')
  if (resources) capabilities.resources = { subscribe: offered('subscribe'), listChanged: true }
  if (prompts) capabilities.prompts = { listChanged: true }
  if (completions) capabilities.completions = {}
  return capabilities
}
