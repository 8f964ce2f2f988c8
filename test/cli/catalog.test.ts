// `toolgate serve` aggregates its upstreams' resources, prompts and completions (issue 23, item 2):
// prompt names take the server's prefix, resource URIs are served unchanged and routed back to
// their server, subscriptions and list_changed are relayed, a prompt name or URI that two servers
// share stops the gateway at startup naming both, and the policy's prompt:/resource: globs hide,
// refuse and ask. Real SDK clients over stdio and Streamable HTTP, real SDK upstreams over stdio.
import { rm } from 'node:fs/promises'
import path from 'node:path'
import {
  ElicitRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, runCli, serveHttp, serveStdio, tempDir, textOf, writeConfig } from './helpers.js'

const UPSTREAM = path.resolve(import.meta.dirname, '../fixtures/catalog-mcp-server.mjs')
const BOUND_MS = 30_000
const upstream = (...args: string[]) => ({ command: process.execPath, args: [UPSTREAM, ...args] })

async function until(check: () => boolean, what: () => unknown = () => ''): Promise<void> {
  const deadline = Date.now() + BOUND_MS
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${JSON.stringify(what())}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

let dir: string
let cleanup: () => Promise<void>
beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})
afterAll(async () => {
  await cleanup()
})

describe('two upstreams behind toolgate serve (stdio)', () => {
  let s: Connected
  const updates: string[] = []
  const changes: string[] = []
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      { root: '.', servers: { a: upstream('a'), b: { ...upstream('b'), prefix: 'bee.' } } },
      'two.json',
    )
    s = await serveStdio(['--config', config])
    s.client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => void updates.push(params.uri))
    s.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changes.push('resources'))
    s.client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changes.push('prompts'))
  })
  afterAll(async () => {
    await s?.close()
  })

  it('issue 23, item 2: declares resources (subscribe, listChanged), prompts and completions', () => {
    expect(s.client.getServerCapabilities()).toMatchObject({
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
    })
  })

  it('issue 23, item 2: lists every resource and template with its own URI, every prompt under its prefix', async () => {
    const { resources } = await s.client.listResources()
    expect(resources.map((r) => r.uri)).toEqual([
      'note://a/readme',
      'note://a/logo',
      'note://b/readme',
      'note://b/logo',
    ])
    expect(resources[0]).toMatchObject({ name: 'readme', title: 'Readme of a', mimeType: 'text/plain' })
    const { resourceTemplates } = await s.client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['note://a/items/{id}', 'note://b/items/{id}'])
    const { prompts } = await s.client.listPrompts()
    expect(prompts.map((p) => p.name)).toEqual(['a__greet', 'a__plain', 'bee.greet', 'bee.plain'])
    expect(prompts[2]).toMatchObject({
      description: 'Greet someone (b)',
      arguments: [{ name: 'name', required: true }],
    })
  })

  it('issue 23, item 2: a read goes to the server that lists the URI or owns the matching template', async () => {
    expect(await s.client.readResource({ uri: 'note://b/readme' })).toEqual({
      contents: [{ uri: 'note://b/readme', mimeType: 'text/plain', text: 'readme of b' }],
    })
    expect(await s.client.readResource({ uri: 'note://a/logo' })).toEqual({
      contents: [{ uri: 'note://a/logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
    })
    expect((await s.client.readResource({ uri: 'note://b/items/7' })).contents).toEqual([
      { uri: 'note://b/items/7', mimeType: 'text/plain', text: 'item 7 of b' },
    ])
    await expect(s.client.readResource({ uri: 'note://c/readme' })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining('no upstream server lists it'),
    })
  })

  it('issue 23, item 2: prompts/get with arguments reaches the owning server under its own name', async () => {
    expect(await s.client.getPrompt({ name: 'bee.greet', arguments: { name: 'Ada' } })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello Ada, from b' } }],
    })
    expect((await s.client.getPrompt({ name: 'a__plain' })).messages).toEqual([
      { role: 'assistant', content: { type: 'text', text: 'plain a' } },
    ])
    await expect(s.client.getPrompt({ name: 'greet' })).rejects.toMatchObject({ code: -32602 })
  })

  it('issue 23, item 2: completion/complete for a prompt argument and a template variable', async () => {
    const prompt = await s.client.complete({
      ref: { type: 'ref/prompt', name: 'bee.greet' },
      argument: { name: 'name', value: 'Al' },
    })
    expect(prompt.completion.values).toEqual(['Alan'])
    const template = await s.client.complete({
      ref: { type: 'ref/resource', uri: 'note://a/items/{id}' },
      argument: { name: 'id', value: 'b' },
    })
    expect(template.completion.values).toEqual(['banana'])
  })

  it('issue 23, item 2: subscribe → the upstream sends updated → the client gets it; unsubscribe reaches the upstream', async () => {
    await s.client.subscribeResource({ uri: 'note://b/readme' })
    expect(textOf(await s.client.callTool({ name: 'bee.subscriptions', arguments: {} }))).toBe('["note://b/readme"]')
    // The other server was not asked.
    expect(textOf(await s.client.callTool({ name: 'a__subscriptions', arguments: {} }))).toBe('[]')
    expect(textOf(await s.client.callTool({ name: 'bee.touch', arguments: { uri: 'note://b/readme' } }))).toBe('sent')
    await until(
      () => updates.length === 1,
      () => updates,
    )
    expect(updates).toEqual(['note://b/readme'])
    await s.client.unsubscribeResource({ uri: 'note://b/readme' })
    expect(textOf(await s.client.callTool({ name: 'bee.subscriptions', arguments: {} }))).toBe('[]')
  })

  it('issue 23, item 2: an upstream list_changed is re-listed and relayed', async () => {
    await s.client.callTool({ name: 'bee.add', arguments: { kind: 'prompt' } })
    await until(
      () => changes.includes('prompts'),
      () => changes,
    )
    expect((await s.client.listPrompts()).prompts.map((p) => p.name)).toContain('bee.extra')
    await s.client.callTool({ name: 'a__add', arguments: { kind: 'resource' } })
    await until(
      () => changes.includes('resources'),
      () => changes,
    )
    expect((await s.client.listResources()).resources.map((r) => r.uri)).toContain('note://a/extra')
    expect(await s.client.readResource({ uri: 'note://a/extra' })).toMatchObject({ contents: [{ text: 'extra' }] })
  })
})

describe('collisions', () => {
  it('issue 23, item 4: a prompt name or resource URI that two servers share stops the gateway, naming both', async () => {
    const config = await writeConfig(
      dir,
      {
        root: '.',
        servers: {
          one: { ...upstream('a', 'shared'), prefix: '' },
          two: { ...upstream('b', 'shared'), prefix: 'x__' },
        },
        // With "x__", only the URI collides; the prompt "shared" of two is "x__shared".
      },
      'uri-collision.json',
    )
    const run = await runCli(['serve', '--config', config])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      'servers.two: its resource "note://shared" is not served: the URI is already served by servers.one',
    )
    expect(run.stderr).not.toContain('its prompt')

    const prompts = await writeConfig(
      dir,
      {
        root: '.',
        servers: { one: { ...upstream('a', 'shared'), prefix: '' }, two: { ...upstream('b'), prefix: '' } },
      },
      'prompt-collision.json',
    )
    const check = await runCli(['serve', '--check', '--config', prompts])
    expect(check.code).toBe(1)
    expect(check.stdout).toContain(
      'servers.two: its prompt "greet" is not served: the name "greet" is already served by servers.one',
    )
    // Templates and resources of different servers do not collide.
    expect(check.stdout).not.toContain('its resource')
  }, 60_000)
})

describe('tool-only upstreams', () => {
  it('issue 23, item 2: the gateway declares no resources, prompts or completions when no upstream does', async () => {
    const plain = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
    const config = await writeConfig(
      dir,
      { root: '.', servers: { up: { command: process.execPath, args: [plain] } } },
      'tools-only.json',
    )
    const s = await serveStdio(['--config', config])
    try {
      const capabilities = s.client.getServerCapabilities()
      expect([capabilities?.resources, capabilities?.prompts, capabilities?.completions]).toEqual([
        undefined,
        undefined,
        undefined,
      ])
      expect(capabilities?.tools).toBeDefined()
    } finally {
      await s.close()
    }
  }, 60_000)
})

describe('while running', () => {
  it('issue 23, item 4: a URI that a second server starts to list later is left out and logged; the first keeps it', async () => {
    const config = await writeConfig(
      dir,
      { root: '.', servers: { one: upstream('a', 'shared'), two: upstream('b') } },
      'late-collision.json',
    )
    const s = await serveStdio(['--config', config])
    try {
      const changed: string[] = []
      s.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changed.push('resources'))
      await s.client.callTool({ name: 'two__add', arguments: { kind: 'shared' } })
      await until(
        () => s.stderr().includes('its resource "note://shared" is not served'),
        () => s.stderr(),
      )
      expect(s.stderr()).toContain(
        'servers.two: its resource "note://shared" is not served: the URI is already served by servers.one',
      )
      const uris = (await s.client.listResources()).resources.map((r) => r.uri)
      expect(uris.filter((uri) => uri === 'note://shared')).toHaveLength(1)
      expect(await s.client.readResource({ uri: 'note://shared' })).toMatchObject({ contents: [{ text: 'a' }] })
    } finally {
      await s.close()
    }
  }, 60_000)

  it('issue 23, item 5: an upstream that goes down leaves the lists (list_changed) and comes back with its subscriptions', async () => {
    const gate = path.join(dir, 'gate')
    const config = await writeConfig(
      dir,
      {
        root: '.',
        servers: { a: upstream('a'), b: upstream('b', `gate=${gate}`) },
        reconnect: { initialDelayMs: 100, maxDelayMs: 200 },
      },
      'down.json',
    )
    const s = await serveStdio(['--config', config])
    try {
      const changes: string[] = []
      s.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changes.push('resources'))
      s.client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changes.push('prompts'))
      await s.client.subscribeResource({ uri: 'note://b/readme' })
      await s.client.callTool({ name: 'b__crash', arguments: {} }).catch(() => {})
      await until(
        () => changes.includes('resources') && changes.includes('prompts'),
        () => changes,
      )
      expect((await s.client.listResources()).resources.map((r) => r.uri)).toEqual(['note://a/readme', 'note://a/logo'])
      expect((await s.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['a__greet', 'a__plain'])
      changes.length = 0
      await rm(gate)
      await until(
        () => changes.includes('resources') && changes.includes('prompts'),
        () => [changes, s.stderr()],
      )
      expect((await s.client.listPrompts()).prompts.map((p) => p.name)).toEqual([
        'a__greet',
        'a__plain',
        'b__greet',
        'b__plain',
      ])
      expect(textOf(await s.client.callTool({ name: 'b__subscriptions', arguments: {} }))).toBe('["note://b/readme"]')
    } finally {
      await s.close()
    }
  }, 60_000)
})

describe('policy over prompts and resources', () => {
  let s: Connected
  const asked: string[] = []
  let answer: 'accept' | 'decline' = 'accept'
  beforeAll(async () => {
    const config = await writeConfig(
      dir,
      {
        root: '.',
        servers: { a: upstream('a'), b: upstream('b') },
        policy: {
          deny: ['resource:note://a/logo', 'prompt:b__*', 'resource:note://b/items/*'],
          ask: ['resource:note://a/items/*', 'prompt:a__plain'],
        },
      },
      'policy.json',
    )
    s = await serveStdio(['--config', config], { elicitation: {} })
    s.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message)
      return { action: answer, content: answer === 'accept' ? { approve: true } : undefined }
    })
  })
  afterAll(async () => {
    await s?.close()
  })

  it('issue 23, item 2: deny hides prompts, resources and templates from the lists', async () => {
    expect((await s.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['a__greet', 'a__plain'])
    expect((await s.client.listResources()).resources.map((r) => r.uri)).toEqual([
      'note://a/readme',
      'note://b/readme',
      'note://b/logo',
    ])
    expect((await s.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'note://a/items/{id}',
    ])
  })

  it('issue 23, item 2: deny refuses reads, gets, subscriptions and completions, naming the rule', async () => {
    await expect(s.client.readResource({ uri: 'note://a/logo' })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining('the gateway policy denies the resource "note://a/logo"'),
    })
    // A URI under a denied template is refused too, though it is not listed anywhere.
    await expect(s.client.readResource({ uri: 'note://b/items/1' })).rejects.toThrow(
      /deny: "resource:note:\/\/b\/items\/\*"/,
    )
    await expect(s.client.getPrompt({ name: 'b__greet', arguments: { name: 'x' } })).rejects.toThrow(
      /the gateway policy denies the prompt "b__greet" \(deny: "prompt:b__\*"\)/,
    )
    await expect(s.client.subscribeResource({ uri: 'note://a/logo' })).rejects.toMatchObject({ code: -32002 })
    await expect(
      s.client.complete({ ref: { type: 'ref/prompt', name: 'b__greet' }, argument: { name: 'name', value: '' } }),
    ).rejects.toMatchObject({ code: -32602 })
    expect(asked).toEqual([])
  })

  it('issue 23, item 2: ask puts a read or a get to the client first; a decline refuses it', async () => {
    answer = 'accept'
    expect((await s.client.readResource({ uri: 'note://a/items/9' })).contents).toMatchObject([{ text: 'item 9 of a' }])
    expect(asked).toHaveLength(1)
    expect(asked[0]).toContain('Allow reading the resource note://a/items/9?')
    expect(asked[0]).toContain('ask: "resource:note://a/items/*"')
    answer = 'decline'
    await expect(s.client.getPrompt({ name: 'a__plain' })).rejects.toThrow(/was not approved: the MCP client declined/)
    expect(asked).toHaveLength(2)
    expect(asked[1]).toContain('Allow the prompt a__plain?')
    // What no ask glob matches is not asked.
    expect((await s.client.getPrompt({ name: 'a__greet', arguments: { name: 'Ada' } })).messages).toHaveLength(1)
    expect(asked).toHaveLength(2)
  })
})

describe('policy over other spellings of a URI (issue 36, item 10)', () => {
  let s: Connected
  beforeAll(async () => {
    // One server offering resources: every unlisted URI is routed to it, so only the policy stands
    // between a client's spelling and the upstream.
    const config = await writeConfig(
      dir,
      { root: '.', servers: { a: upstream('a') }, policy: { deny: ['resource:note://a/logo'] } },
      'spellings.json',
    )
    s = await serveStdio(['--config', config])
  })
  afterAll(async () => {
    await s?.close()
  })

  it('denies every spelling that normalizes to a denied URI', async () => {
    for (const uri of [
      'note://a/items/../logo',
      'note://a/items/%2e%2e/logo',
      'note://a/./logo',
      'note://a//logo',
      'note://A/%6cogo',
      'NOTE://a/sub/../logo',
    ])
      await expect(s.client.readResource({ uri }), uri).rejects.toMatchObject({
        code: -32002,
        message: expect.stringContaining('the gateway policy denies the resource "note://a/logo"'),
      })
  })

  it('refuses, with -32602, a URI that cannot be normalized', async () => {
    await expect(s.client.readResource({ uri: 'note://a/items/..%2flogo' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('"%2f", an encoded "/"'),
    })
  })

  it('sends an allowed URI to the upstream in the normal form it was judged in', async () => {
    expect((await s.client.readResource({ uri: 'note://a/x/../items/%37' })).contents).toMatchObject([
      { uri: 'note://a/items/7', text: 'item 7 of a' },
    ])
  })
})

describe('Streamable HTTP: subscriptions of several clients', () => {
  it('issue 23, item 2: the upstream subscription lasts until the last client unsubscribes or leaves', async () => {
    const config = await writeConfig(dir, { root: '.', servers: { a: upstream('a') } }, 'http.json')
    const first = await serveHttp(['--config', config])
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const second = new Client({ name: 'second', version: '1.0.0' })
    try {
      await second.connect(new StreamableHTTPClientTransport(new URL(first.url ?? '')))
      const got = { first: [] as string[], second: [] as string[] }
      first.client.setNotificationHandler(
        ResourceUpdatedNotificationSchema,
        ({ params }) => void got.first.push(params.uri),
      )
      second.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => void got.second.push(params.uri))
      const subscriptions = async () => textOf(await first.client.callTool({ name: 'a__subscriptions', arguments: {} }))
      await first.client.subscribeResource({ uri: 'note://a/readme' })
      await second.subscribeResource({ uri: 'note://a/readme' })
      await first.client.callTool({ name: 'a__touch', arguments: { uri: 'note://a/readme' } })
      await until(
        () => got.first.length === 1 && got.second.length === 1,
        () => got,
      )
      await first.client.unsubscribeResource({ uri: 'note://a/readme' })
      expect(await subscriptions()).toBe('["note://a/readme"]')
      await first.client.callTool({ name: 'a__touch', arguments: { uri: 'note://a/readme' } })
      await until(
        () => got.second.length === 2,
        () => got,
      )
      expect(got.first).toEqual(['note://a/readme'])
      // The second client leaves without unsubscribing: its subscription is released.
      const transport = second.transport as InstanceType<typeof StreamableHTTPClientTransport>
      await transport.terminateSession()
      await second.close()
      const deadline = Date.now() + BOUND_MS
      let left = await subscriptions()
      while (left !== '[]' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        left = await subscriptions()
      }
      expect(left).toBe('[]')
    } finally {
      await second.close().catch(() => {})
      await first.close()
    }
  }, 60_000)
})
