// The MCP SDK's stdio client transport for a command server, as both eras' sessions start it: the
// SDK's default environment plus the spec's, the server's stderr passed through to ours.
import type { McpServerSpec } from './client.js'

/** The SDK's transport for `spec` (loaded on first use); `maxBufferSize` bounds one message when given. */
export async function sdkStdioTransport(spec: Extract<McpServerSpec, { command: string }>, maxBufferSize?: number) {
  const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/client/stdio')
  return new StdioClientTransport({
    command: spec.command,
    ...(spec.args ? { args: [...spec.args] } : {}),
    env: { ...getDefaultEnvironment(), ...spec.env },
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
    stderr: 'inherit',
    ...(maxBufferSize !== undefined ? { maxBufferSize } : {}),
  })
}
