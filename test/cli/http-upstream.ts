// An upstream MCP server over Streamable HTTP on 127.0.0.1, in the test's process: it records the
// Authorization header of every request it gets and has a `hold` tool the test releases by hand.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'

export interface HttpUpstream {
  readonly url: string
  /** The Authorization header of every request received (undefined when absent). */
  readonly authorizations: (string | undefined)[]
  /** `hold` calls in progress, and the most at once. */
  readonly holds: { inFlight: number; max: number; arrived: number }
  /** Let the oldest waiting `hold` call finish. */
  release(): void
  close(): Promise<void>
}

export async function startHttpUpstream(): Promise<HttpUpstream> {
  const authorizations: (string | undefined)[] = []
  const holds = { inFlight: 0, max: 0, arrived: 0 }
  const waiting: (() => void)[] = []
  const make = () => {
    const server = new McpServer({ name: 'web-upstream', version: '1.0.0' })
    server.registerTool('whoami', { description: 'Say hello.' }, async () => ({
      content: [{ type: 'text', text: 'hello from upstream' }],
    }))
    server.registerTool('hold', { description: 'Wait until the test releases the call.' }, async () => {
      holds.arrived++
      holds.inFlight++
      holds.max = Math.max(holds.max, holds.inFlight)
      await new Promise<void>((resolve) => waiting.push(resolve))
      holds.inFlight--
      return { content: [{ type: 'text', text: 'released' }] }
    })
    return server
  }
  const http: Server = createServer((req: IncomingMessage, res) => {
    authorizations.push(req.headers.authorization)
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      text += chunk
    })
    req.on('end', async () => {
      // Stateless: one server and transport per request.
      const server = make()
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      res.on('close', () => {
        void transport.close()
        void server.close()
      })
      await server.connect(transport)
      await transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text))
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    authorizations,
    holds,
    release: () => waiting.shift()?.(),
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      }),
  }
}
