// The gateway behind `toolgate serve` and `toolgate tools`: toolgate's own tools rooted in a
// workspace, upstream MCP servers imported with their name as prefix, and the policy, all seen
// through one serving agent.
import { stat } from 'node:fs/promises'
import type { Context } from 'cordis'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { connectMcpServer, type McpConnection } from '../mcp/client.js'
import { type McpToolAnnotations, setMcpToolMeta } from '../mcp/tool-meta.js'
import { createToolRuntime, type ToolRuntime } from '../preset/index.js'
import { type AgentHandle, createAgent } from '../runtime/index.js'
import { createBashTool, createFsTools } from '../tools/index.js'
import { serverPrefix } from './config.js'
import type { Log } from './log.js'
import { applyPolicy } from './policy.js'
import type { GatewaySettings } from './settings.js'

export interface Gateway {
  readonly ctx: Context
  readonly tools: ToolRuntime
  /** The scope served to clients. */
  readonly agent: AgentHandle
  readonly connections: ReadonlyMap<string, McpConnection>
  close(): Promise<void>
}

/** What MCP clients are told about toolgate's own tools. */
const ANNOTATIONS: Readonly<Record<string, McpToolAnnotations>> = {
  read_file: { readOnlyHint: true },
  glob: { readOnlyHint: true },
  grep: { readOnlyHint: true },
  list_dir: { readOnlyHint: true },
  write_file: { destructiveHint: true, idempotentHint: true },
  edit_file: { destructiveHint: true },
  bash: { destructiveHint: true, openWorldHint: true },
}

/** Build the gateway; fails (having closed whatever it started) when the root or an upstream server is unusable. */
export async function openGateway(settings: GatewaySettings, log: Log): Promise<Gateway> {
  const root = await stat(settings.root).catch(() => undefined)
  if (!root?.isDirectory()) throw new ConfigError('--root', `"${settings.root}" is not a directory`)
  // createToolRuntime() installs the timeout policy; loading it again would time every call twice.
  const { ctx, tools } = await createToolRuntime({ mode: settings.mode })
  const own: ToolDefinition[] = createFsTools({ root: settings.root })
  if (settings.bash) own.push(createBashTool({ cwd: settings.root }))
  for (const definition of own) {
    const annotations = ANNOTATIONS[definition.name]
    if (annotations) setMcpToolMeta(definition, { annotations })
    tools.register(definition)
  }
  log.debug(`workspace ${settings.root}: ${own.map((d) => d.name).join(', ')}`)

  const connections = new Map<string, McpConnection>()
  const failures: string[] = []
  await Promise.all(
    Object.entries(settings.servers).map(async ([name, spec]) => {
      try {
        const connection = await connectMcpServer(ctx, spec, {
          prefix: serverPrefix(name),
          maxMessageBytes: settings.maxMessageBytes,
        })
        connections.set(name, connection)
        log.debug(`server ${name}: ${connection.tools.join(', ') || '(no tools)'}`)
      } catch (error) {
        failures.push(`servers.${name}: ${error instanceof Error ? error.message : String(error)}`)
      }
    }),
  )
  const close = async () => {
    await Promise.all([...connections.values()].map((connection) => connection.close()))
  }
  if (failures.length) {
    await close()
    throw new ConfigError('servers', failures)
  }

  const agent = createAgent(ctx, { id: 'toolgate' })
  const names = () => [...own.map((d) => d.name), ...[...connections.values()].flatMap((c) => c.tools)]
  applyPolicy(agent, settings.policy, names)
  return { ctx, tools, agent, connections, close }
}
