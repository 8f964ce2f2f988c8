// Issue 27: deferred tools, tools.search, search_tools and Code Mode's $search.
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent, createToolRuntime, defineTool, type ToolRuntimeHandle } from '../../src/index.js'

const handles: ToolRuntimeHandle[] = []
afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.dispose()
})

async function runtime(mode: 'native' | 'code' = 'native'): Promise<ToolRuntimeHandle> {
  const handle = await createToolRuntime({ mode, codeMode: { runtime: 'inline' } })
  handles.push(handle)
  return handle
}

function tool(name: string, description: string, extra: { defer?: boolean } = {}) {
  return defineTool({
    name,
    description,
    parameters: { path: { type: 'string', description: 'A file path.' } },
    output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
    execute: async () => `${name} ran`,
    ...extra,
  })
}

const signal = new AbortController().signal
const names = (schemas: { name: string }[]) => schemas.map((s) => s.name).sort()

describe('deferred tools', () => {
  it('a defer: true tool is callable but absent from schemas() until loaded; search_tools appears', async () => {
    const { tools } = await runtime()
    tools.register(tool('read_file', 'Read a file.'))
    tools.register(tool('delete_file', 'Delete a file from disk.', { defer: true }))
    expect(names(tools.schemas())).toEqual(['read_file', 'search_tools'])
    expect(tools.deferred()).toEqual(['delete_file'])
    const result = await tools.execute({
      callId: 'c1',
      name: 'delete_file',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.isError).toBe(false)
    expect(tools.load(['delete_file', 'nope'])).toEqual(['delete_file'])
    expect(names(tools.schemas())).toEqual(['delete_file', 'read_file'])
  })

  it('no deferred tool: no search_tools in schemas()', async () => {
    const { tools } = await runtime()
    tools.register(tool('read_file', 'Read a file.'))
    expect(names(tools.schemas())).toEqual(['read_file'])
  })

  it('tools.defer(patterns, agent) defers per scope; defer: false wins; the rule is removable', async () => {
    const { ctx, tools } = await runtime()
    tools.register(tool('gh__create_issue', 'Create an issue.'))
    tools.register(tool('gh__list_issues', 'List issues.'))
    tools.register(tool('gh__pinned', 'Always listed.', { defer: false }))
    tools.register(tool('local', 'Local.'))
    const agent = createAgent(ctx, { id: 'a' })
    const remove = tools.defer(['gh__*'], agent)
    expect(names(tools.schemas(agent))).toEqual(['gh__pinned', 'local', 'search_tools'])
    expect(names(tools.schemas())).toEqual(['gh__create_issue', 'gh__list_issues', 'gh__pinned', 'local'])
    remove()
    expect(names(tools.schemas(agent))).toEqual(['gh__create_issue', 'gh__list_issues', 'gh__pinned', 'local'])
    expect(() => tools.defer([])).toThrow(/tools\.defer\(patterns\)/)
    expect(() => tools.defer([3 as unknown as string])).toThrow(/patterns\)\[0\]/)
  })

  it('loaded state persists per agent and is inherited by its children, not by siblings', async () => {
    const { ctx, tools } = await runtime()
    tools.register(tool('alpha', 'Alpha.', { defer: true }))
    const a = createAgent(ctx, { id: 'a' })
    const b = createAgent(ctx, { id: 'b' })
    const child = createAgent(a.ctx, { id: 'a-child' })
    tools.load(['alpha'], a)
    expect(names(tools.schemas(a))).toEqual(['alpha'])
    expect(names(tools.schemas(child))).toEqual(['alpha'])
    expect(names(tools.schemas(b))).toEqual(['search_tools'])
    expect(names(tools.schemas())).toEqual(['search_tools'])
  })

  it('search_tools cannot be registered or restricted while installed', async () => {
    const { ctx, tools } = await runtime()
    expect(() => tools.register(tool('search_tools', 'mine'))).toThrow(/reserved for the installed finder/)
    tools.register(tool('alpha', 'Alpha.', { defer: true }))
    const agent = createAgent(ctx, { id: 'a' })
    expect(() => agent.ctx.tools.restrict({ deny: ['search_tools'] })).toThrow(/reserved finder/)
  })
})

describe('tools.search', () => {
  it('ranks by name words, description and parameters, best first', async () => {
    const { tools } = await runtime()
    tools.register(tool('create_issue', 'Open a new issue in a repository.', { defer: true }))
    tools.register(tool('listPullRequests', 'List pull requests of a repository.', { defer: true }))
    tools.register(tool('read-file', 'Read the contents of a file.'))
    const matches = tools.search('pull requests')
    expect(matches[0]?.name).toBe('listPullRequests')
    expect(matches[0]?.score).toBeGreaterThan(0)
    expect(tools.search('open issue')[0]?.name).toBe('create_issue')
    expect(tools.search('read file contents', { limit: 1 }).map((m) => m.name)).toEqual(['read-file'])
    expect(tools.search('   ')).toEqual([])
    expect(() => tools.search('x', { limit: 0 })).toThrow(/limit/)
  })

  it('never reveals a hidden (another agent’s) or denied tool', async () => {
    const { ctx, tools } = await runtime()
    tools.register(tool('secret_vault_open', 'Open the secret vault.', { defer: true }))
    tools.register(tool('vault_status', 'Status of the vault.', { defer: true }))
    const a = createAgent(ctx, { id: 'a' })
    const b = createAgent(ctx, { id: 'b' })
    a.ctx.tools.restrict({ deny: ['secret_vault_open'] })
    b.ctx.tools.register(tool('b_vault_private', 'Private vault of b.'))
    const seen = tools.search('vault', { agent: a, limit: 50 }).map((m) => m.name)
    expect(seen).toEqual(['vault_status'])
    expect(
      tools
        .search('vault', { agent: b, limit: 50 })
        .map((m) => m.name)
        .sort(),
    ).toEqual(['b_vault_private', 'secret_vault_open', 'vault_status'])
    // search_tools run by agent a neither returns nor loads the denied tool.
    const result = await tools.execute({
      callId: 'c',
      name: 'search_tools',
      arguments: { query: 'secret vault' },
      agent: a,
      signal,
    })
    expect(result.isError).toBe(false)
    expect(JSON.stringify(result)).not.toContain('secret_vault_open')
  })

  it('follows register and unregister incrementally after the index is built', async () => {
    const { tools } = await runtime()
    tools.register(tool('first_tool', 'Something about zebras.'))
    expect(tools.search('zebras').map((m) => m.name)).toEqual(['first_tool'])
    const remove = tools.register(tool('second_tool', 'More about zebras and giraffes.'))
    expect(tools.search('giraffes').map((m) => m.name)).toEqual(['second_tool'])
    remove()
    expect(tools.search('giraffes')).toEqual([])
    expect(tools.search('zebras').map((m) => m.name)).toEqual(['first_tool'])
  })
})

describe('search_tools', () => {
  it('returns full schemas and loads the matches for the calling agent only', async () => {
    const { ctx, tools } = await runtime()
    tools.register(tool('create_issue', 'Open a new issue in a repository.', { defer: true }))
    tools.register(tool('merge_pull_request', 'Merge a pull request.', { defer: true }))
    const a = createAgent(ctx, { id: 'a' })
    const b = createAgent(ctx, { id: 'b' })
    const result = await tools.execute({
      callId: 'c',
      name: 'search_tools',
      arguments: { query: 'open an issue', limit: 1 },
      agent: a,
      signal,
    })
    expect(result.isError).toBe(false)
    const value = (result as unknown as { value: { tools: { name: string; parameters: unknown }[]; loaded: string[] } })
      .value
    expect(value.tools.map((t) => t.name)).toEqual(['create_issue'])
    expect(value.tools[0]?.parameters).toMatchObject({ type: 'object', properties: { path: { type: 'string' } } })
    expect(value.loaded).toEqual(['create_issue'])
    expect(names(tools.schemas(a))).toEqual(['create_issue', 'search_tools'])
    expect(names(tools.schemas(b))).toEqual(['search_tools'])
    const bad = await tools.execute({ callId: 'd', name: 'search_tools', arguments: { limit: 2 }, agent: a, signal })
    expect(bad.isError).toBe(true)
  })
})

describe('Code Mode', () => {
  it('the SDK declares loaded tools in full and deferred ones as a one-line index', async () => {
    const { tools } = await runtime('code')
    tools.register(tool('read_file', 'Read a file.'))
    tools.register(tool('delete_file', 'Delete a file from disk. Irreversible.', { defer: true }))
    const sdk = tools.sdk()
    expect(sdk).toContain('read_file(args')
    expect(sdk).not.toContain('delete_file(args')
    expect(sdk).toContain(' * - delete_file: Delete a file from disk.')
    expect(sdk).toContain('tools.$search(query)')
    tools.load(['delete_file'])
    expect(tools.sdk()).toContain('delete_file(args')
  })

  it('past 100 deferred tools the SDK only counts them', async () => {
    const { tools } = await runtime('code')
    for (let i = 0; i < 101; i++) tools.register(tool(`t${i}`, `Tool ${i}.`, { defer: true }))
    const sdk = tools.sdk()
    expect(sdk).toContain('101 more tool(s)')
    expect(sdk).not.toContain(' * - t1')
  })

  it('tools.$search returns TypeScript signatures and the program can call the match', async () => {
    const { tools } = await runtime('code')
    tools.register(tool('delete_file', 'Delete a file from disk.', { defer: true }))
    const result = await tools.execute({
      callId: 'c',
      name: 'run_code',
      arguments: {
        description: 'find and call',
        code: 'const sig = await tools.$search("remove a file"); return { sig, out: await tools.delete_file({ path: "x" }) }',
      },
      signal,
    })
    expect(result.isError).toBe(false)
    const value = (result as unknown as { value: { result: { sig: string; out: string } } }).value.result
    expect(value.sig).toContain('delete_file(args: ToolArgsMap["delete_file"])')
    expect(value.out).toBe('delete_file ran')
  })
})

describe('the text engine', () => {
  it('splits snake, kebab, dotted and camel names into words, and stems lightly', async () => {
    const { splitWords, stem } = await import('../../src/search/index.js')
    expect(splitWords('listPullRequests')).toEqual(['list', 'pull', 'requests'])
    expect(splitWords('get-file_info.v2')).toEqual(['get', 'file', 'info', 'v2'])
    expect(splitWords('HTMLParser')).toEqual(['html', 'parser'])
    expect(['files', 'creating', 'created', 'create'].map(stem)).toEqual(['file', 'creat', 'creat', 'creat'])
  })
})
