// Real MCP servers nobody here wrote, behind `toolgate serve`: every listed tool and every result
// must come out as the server gave it directly (issue 23, items 2 and 3: features relayed, content lossless).
// The only difference allowed is the name prefix the config gives each server.
import { mkdir, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, tempDir, writeConfig } from '../cli/helpers.js'

const require = createRequire(import.meta.url)
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'fidelity', version: '1.0.0' }, { capabilities: {} })
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' }))
  return client
}

/** A listed tool without its name, which is the one thing the gateway changes (the prefix). */
function unnamed(tool: Tool): Omit<Tool, 'name'> {
  const { name: _name, ...rest } = tool
  return rest
}

let dir: string
let cleanup: () => Promise<void>
let workspace: string
const direct: Record<'ev' | 'fs', Client> = {} as Record<'ev' | 'fs', Client>
let gateway: Client

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  workspace = path.join(dir, 'files')
  await mkdir(path.join(workspace, 'sub'), { recursive: true })
  await writeFile(path.join(workspace, 'notes.txt'), 'line one\nline two\nline three\n')
  await writeFile(path.join(workspace, 'sub', 'data.json'), '{"a":1}\n')
  // A 1×1 PNG: read_media_file answers with an image block.
  await writeFile(
    path.join(workspace, 'dot.png'),
    Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    ),
  )
  const config = await writeConfig(dir, {
    root: '.',
    servers: {
      ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      fs: { command: process.execPath, args: [FILESYSTEM, workspace] },
    },
  })
  ;[direct.ev, direct.fs, gateway] = await Promise.all([
    connect([EVERYTHING, 'stdio']),
    connect([FILESYSTEM, workspace]),
    connect([BIN, 'serve', '--config', config]),
  ])
}, 120_000)

afterAll(async () => {
  await Promise.all([direct.ev?.close(), direct.fs?.close(), gateway?.close()])
  await cleanup?.()
})

describe.each(['ev', 'fs'] as const)('server %s behind the gateway', (server) => {
  it('lists every tool exactly as the server does, under the prefix', async () => {
    const own = (await direct[server].listTools()).tools
    const served = new Map((await gateway.listTools()).tools.map((tool) => [tool.name, tool]))
    expect(own.length).toBeGreaterThan(5)
    for (const tool of own) {
      const relayed = served.get(`${server}__${tool.name}`)
      expect(relayed, `${server}__${tool.name} is listed`).toBeDefined()
      // One documented difference: a task-only tool is also callable plainly through the gateway
      // (it follows the task itself), so it is listed as optional.
      const expected = unnamed(tool)
      if (tool.execution?.taskSupport === 'required')
        expected.execution = { ...tool.execution, taskSupport: 'optional' }
      expect(unnamed(relayed as Tool)).toEqual(expected)
    }
  })
})

/** Calls whose answers do not depend on time or on earlier calls, so both sides must be identical. */
const CALLS: Record<'ev' | 'fs', Array<[string, Record<string, unknown>]>> = {
  ev: [
    ['echo', { message: 'héllo ✓' }],
    ['get-sum', { a: 2.5, b: -1 }],
    ['get-tiny-image', {}],
    ['get-annotated-message', { messageType: 'error', includeImage: true }],
    ['get-annotated-message', { messageType: 'debug', includeImage: false }],
    ['get-resource-links', { count: 4 }],
    ['get-resource-reference', { resourceType: 'Text', resourceId: 3 }],
    ['get-resource-reference', { resourceType: 'Blob', resourceId: 2 }],
    ['get-structured-content', { location: 'Chicago' }],
    // The server's own failure (a missing required argument) comes back as it sent it.
    ['echo', {}],
  ],
  fs: [
    ['list_allowed_directories', {}],
    ['read_text_file', { path: 'notes.txt' }],
    ['read_text_file', { path: 'notes.txt', head: 2 }],
    ['read_media_file', { path: 'dot.png' }],
    ['read_multiple_files', { paths: ['notes.txt', 'sub/data.json', 'missing.txt'] }],
    ['list_directory', { path: '.' }],
    ['directory_tree', { path: '.' }],
    ['search_files', { path: '.', pattern: '**/*.json' }],
    ['edit_file', { path: 'notes.txt', edits: [{ oldText: 'line two', newText: 'line 2' }], dryRun: true }],
    ['read_text_file', { path: '../outside.txt' }],
  ],
}

describe.each(['ev', 'fs'] as const)('results of server %s', (server) => {
  it.each(CALLS[server].map(([name, args]) => [`${name} ${JSON.stringify(args)}`, name, args] as const))(
    '%s is identical through the gateway',
    async (_label, name, args) => {
      // The filesystem server resolves relative paths against its first allowed directory only
      // in some versions; absolute paths keep both sides on the same file.
      const resolved =
        server === 'fs'
          ? Object.fromEntries(
              Object.entries(args).map(([key, value]) => [
                key,
                key === 'path' && typeof value === 'string'
                  ? path.join(workspace, value)
                  : key === 'paths' && Array.isArray(value)
                    ? value.map((p) => path.join(workspace, String(p)))
                    : value,
              ]),
            )
          : args
      const own = await direct[server].callTool({ name, arguments: resolved })
      const relayed = await gateway.callTool({ name: `${server}__${name}`, arguments: resolved })
      // The everything server stamps the resources it makes with the time of day: on a loaded
      // machine the direct and the relayed call can fall in different seconds.
      expect(withoutClock(relayed)).toEqual(withoutClock(own))
    },
  )
})

describe('server ev: resources, prompts and completions behind the gateway', () => {
  it('lists the same resources and templates (URIs are not renamed)', async () => {
    const own = await direct.ev.listResources()
    const relayed = await gateway.listResources()
    expect(own.resources.length).toBeGreaterThan(0)
    for (const resource of own.resources) expect(relayed.resources).toContainEqual(resource)
    const ownTemplates = await direct.ev.listResourceTemplates()
    const relayedTemplates = await gateway.listResourceTemplates()
    for (const template of ownTemplates.resourceTemplates)
      expect(relayedTemplates.resourceTemplates).toContainEqual(template)
  })

  it('reads every listed resource and a templated one, text and blob, identically', async () => {
    const uris = (await direct.ev.listResources()).resources.map((resource) => resource.uri)
    uris.push('demo://resource/dynamic/text/7', 'demo://resource/dynamic/blob/3')
    // Dynamic resources embed the upstream's clock to the second (in blobs too): two reads may straddle one.
    for (const uri of uris)
      expect(withoutClock(await gateway.readResource({ uri }))).toEqual(
        withoutClock(await direct.ev.readResource({ uri })),
      )
  })

  it('lists the prompts under the prefix and gets each identically', async () => {
    const own = (await direct.ev.listPrompts()).prompts
    const served = new Map((await gateway.listPrompts()).prompts.map((prompt) => [prompt.name, prompt]))
    expect(own.length).toBeGreaterThan(0)
    const args: Record<string, Record<string, string>> = {
      'args-prompt': { city: 'Lyon', state: 'Rhône' },
      'completable-prompt': { department: 'Engineering', name: 'Ada' },
      'resource-prompt': { resourceType: 'Text', resourceId: '2' },
    }
    for (const prompt of own) {
      const relayed = served.get(`ev__${prompt.name}`)
      expect(relayed, `ev__${prompt.name} is listed`).toBeDefined()
      const { name: _a, ...rest } = prompt
      const { name: _b, ...relayedRest } = relayed as typeof prompt
      expect(relayedRest).toEqual(rest)
      const request = { arguments: args[prompt.name] ?? {} }
      // The dynamic resource embeds the upstream's clock to the second: two reads may straddle one.
      expect(withoutClock(await gateway.getPrompt({ name: `ev__${prompt.name}`, ...request }))).toEqual(
        withoutClock(await direct.ev.getPrompt({ name: prompt.name, ...request })),
      )
    }
  })

  it('completes a prompt argument identically', async () => {
    const argument = { name: 'department', value: 'E' }
    const own = await direct.ev.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument })
    const relayed = await gateway.complete({ ref: { type: 'ref/prompt', name: 'ev__completable-prompt' }, argument })
    expect(relayed).toEqual(own)
  })
})

/**
 * `value` with the wall-clock times server-everything writes into its dynamic resources blanked,
 * inside base64 blobs too (decoded, blanked, encoded again).
 */
function withoutClock<T>(value: T): T {
  const blank = (text: string): string => text.replace(/created at \d{1,2}:\d{2}:\d{2}(\s?[AP]M)?/g, 'created at TIME')
  return JSON.parse(JSON.stringify(value), (key, field: unknown) =>
    key === 'blob' && typeof field === 'string'
      ? Buffer.from(blank(Buffer.from(field, 'base64').toString('utf8')), 'utf8').toString('base64')
      : typeof field === 'string'
        ? blank(field)
        : field,
  ) as T
}
