// Records the tool lists of real MCP servers (run with `npx tsx bench/record-tool-fixture.mts`):
// the two devDependencies, and registry packages that list their tools without credentials.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

/** A registry package as `npx -y` installed it (run that once first), started with this Node. */
function npx(pkg: string, ...args: string[]) {
  const cache = path.join(homedir(), '.npm/_npx')
  for (const entry of readdirSync(cache)) {
    const main = path.join(cache, entry, 'node_modules', pkg, 'dist/index.js')
    if (existsSync(main)) return { command: process.execPath, args: [main, ...args] }
  }
  return { command: 'npx', args: ['-y', pkg, ...args] }
}

const dir = mkdtempSync(path.join(tmpdir(), 'fixture-'))
const servers: Record<string, { command: string; args: string[]; env?: Record<string, string> }> = {
  everything: {
    command: process.execPath,
    args: ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'],
  },
  filesystem: {
    command: process.execPath,
    args: ['node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', dir],
  },
  memory: npx('@modelcontextprotocol/server-memory'),
  sequentialthinking: npx('@modelcontextprotocol/server-sequential-thinking'),
  github: npx('@modelcontextprotocol/server-github'),
  postgres: npx('@modelcontextprotocol/server-postgres', 'postgresql://127.0.0.1:1/none'),
}
const out: Record<string, unknown[]> = {}
for (const [name, spec] of Object.entries(servers)) {
  const client = new Client({ name: 'fixture-recorder', version: '1.0.0' })
  try {
    const transport = new StdioClientTransport({
      ...spec,
      stderr: 'ignore',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    })
    await Promise.race([
      client.connect(transport),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 90_000)),
    ])
    const { tools } = await client.listTools()
    out[name] = tools.map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema }))
    console.error(`${name}: ${tools.length} tools`)
  } catch (error) {
    console.error(`${name}: skipped (${error instanceof Error ? error.message : String(error)})`)
  } finally {
    await client.close().catch(() => {})
  }
}
writeFileSync('bench/fixtures/mcp-tools.json', `${JSON.stringify(out, null, 1)}\n`)
