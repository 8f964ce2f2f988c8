// `@modelcontextprotocol/server-everything` (a devDependency) for the conformance tests: its
// Streamable HTTP mode on a free port of 127.0.0.1, and the command that runs it over stdio.
import { createRequire } from 'node:module'
import path from 'node:path'
import { freePort, type Running, startProcess, stopChild } from './suite.js'

const require = createRequire(import.meta.url)

/** server-everything's entry: `node EVERYTHING stdio | streamableHttp`. */
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

/** Binds a port-only `listen` to 127.0.0.1 (server-everything takes no host). */
const LOOPBACK_ONLY = path.join(import.meta.dirname, 'loopback-listen.mjs')

/** server-everything over stdio, as a `servers` entry of a toolgate config. */
export function everythingStdio(): { command: string; args: string[] } {
  return { command: process.execPath, args: [EVERYTHING, 'stdio'] }
}

/** server-everything's Streamable HTTP mode (`streamableHttp`, port from $PORT), at /mcp. */
export async function startEverythingHttp(): Promise<Running> {
  let lastError: unknown
  // The port is picked free just before; another process may take it in between, so try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    try {
      const { child, output } = await startProcess(
        process.execPath,
        ['--import', LOOPBACK_ONLY, EVERYTHING, 'streamableHttp'],
        { env: { ...process.env, PORT: String(port) } },
        /MCP Streamable HTTP Server listening on port \d+/,
        'server-everything (streamableHttp)',
      )
      return { url: `http://127.0.0.1:${port}/mcp`, output, stop: () => stopChild(child) }
    } catch (error) {
      lastError = error
    }
  }
  throw lastError
}
