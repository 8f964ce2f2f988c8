// Records the tool lists of more MCP servers from the npm registry, for the frozen tool-search
// evaluation (bench/tool-search-eval.bench.ts). Install the packages in a scratch folder first, then run
// `npx tsx bench/record-registry-catalogs.mts /path/to/scratch` from the repository root. Servers that
// want credentials get dummies: listing tools calls no remote API.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const scratch = process.argv[2]
if (scratch === undefined) throw new Error('usage: record-registry-catalogs.mts SCRATCH_DIR')

interface Spec {
  pkg: string
  args?: string[]
  env?: Record<string, string>
}
const servers: Record<string, Spec> = {
  slack: { pkg: '@modelcontextprotocol/server-slack', env: { SLACK_BOT_TOKEN: 'xoxb-dummy', SLACK_TEAM_ID: 'T0' } },
  gitlab: { pkg: '@modelcontextprotocol/server-gitlab', env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'dummy' } },
  maps: { pkg: '@modelcontextprotocol/server-google-maps', env: { GOOGLE_MAPS_API_KEY: 'dummy' } },
  brave: { pkg: '@modelcontextprotocol/server-brave-search', env: { BRAVE_API_KEY: 'dummy' } },
  playwright: { pkg: '@playwright/mcp' },
  notion: { pkg: '@notionhq/notion-mcp-server', env: { NOTION_TOKEN: 'dummy' } },
  kubernetes: { pkg: 'mcp-server-kubernetes' },
  context7: { pkg: '@upstash/context7-mcp' },
  redis: { pkg: '@modelcontextprotocol/server-redis', args: ['redis://127.0.0.1:1'] },
}

/** The package's bin entry, run with this Node. */
function entry(pkg: string): { main: string; version: string } {
  const dir = path.join(scratch, 'node_modules', pkg)
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    version: string
    bin?: string | Record<string, string>
    main?: string
  }
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0]
  const main = path.join(dir, bin ?? manifest.main ?? 'dist/index.js')
  if (!existsSync(main)) throw new Error(`${pkg}: no entry at ${main}`)
  return { main, version: manifest.version }
}

const out: Record<string, { package: string; tools: unknown[] }> = {}
for (const [name, spec] of Object.entries(servers)) {
  const client = new Client({ name: 'catalog-recorder', version: '1.0.0' })
  try {
    const { main, version } = entry(spec.pkg)
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [main, ...(spec.args ?? [])],
      stderr: 'ignore',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...spec.env },
    })
    await Promise.race([
      client.connect(transport),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 60_000)),
    ])
    const { tools } = await client.listTools()
    out[name] = {
      package: `${spec.pkg}@${version}`,
      tools: tools.map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema })),
    }
    console.error(`${name}: ${tools.length} tools`)
  } catch (error) {
    console.error(`${name}: skipped (${error instanceof Error ? error.message : String(error)})`)
  } finally {
    await client.close().catch(() => {})
  }
}
writeFileSync('bench/fixtures/mcp-tools-registry.json', `${JSON.stringify(out, null, 1)}\n`)
