// Issue 35, item 7: what a tool carries for the hosts that list it again rides the definition
// (`meta`), frozen like the rest of it and never shown to the model; and a failure's own content
// rides the thrown error, not a side table.
import { describe, expect, it } from 'vitest'
import {
  createToolRuntime,
  defineTool,
  type ToolDefinition,
  ToolgateError,
  type ToolMeta,
  ToolRegistrationError,
} from '../../src/index.js'
import { isDeepFrozen, rawTool, signal } from './helpers.js'

const META: ToolMeta = {
  title: 'Read a file',
  annotations: { readOnlyHint: true, title: 'Read' },
  icons: [{ src: 'https://example.test/i.png', mimeType: 'image/png' }],
  execution: { taskSupport: 'optional' },
  _meta: { 'example.test/owner': 'files' },
}

describe('a definition carries meta (issue 35, item 7)', () => {
  it('registration keeps a deep-frozen snapshot: the author changing theirs changes nothing', async () => {
    const { tools } = await createToolRuntime()
    const meta = structuredClone(META) as { -readonly [K in keyof ToolMeta]: ToolMeta[K] } & {
      annotations: { readOnlyHint?: boolean }
    }
    tools.register(rawTool('read', undefined, { meta }))
    meta.title = 'changed'
    meta.annotations.readOnlyHint = false
    const registered = tools.get('read')!
    expect(registered.meta).toEqual(META)
    expect(isDeepFrozen(registered.meta)).toBe(true)
    expect(() => {
      ;(registered.meta as { title?: string }).title = 'x'
    }).toThrow(TypeError)
    expect(() => {
      ;(registered as { meta?: ToolMeta }).meta = {}
    }).toThrow(TypeError)
  })

  it('defineTool freezes its meta too', () => {
    const meta = structuredClone(META) as { annotations: { readOnlyHint?: boolean } }
    const tool = defineTool({
      name: 'typed',
      description: 'd',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      execute: async () => 'x',
      meta: meta as ToolMeta,
    })
    meta.annotations.readOnlyHint = false
    expect(tool.meta).toEqual(META)
    expect(isDeepFrozen(tool.meta)).toBe(true)
  })

  it('the model never sees it: schemas() projects name, description and parameters only', async () => {
    const { tools } = await createToolRuntime()
    tools.register(rawTool('read', undefined, { meta: META }))
    const [schema] = tools.schemas()
    expect(Object.keys(schema!).sort()).toEqual(['description', 'name', 'parameters'])
    expect(JSON.stringify(tools.schemas())).not.toMatch(/Read a file|readOnlyHint|example\.test/)
  })

  it('a malformed meta is refused with every issue, by path', async () => {
    const { tools } = await createToolRuntime()
    const bad = { titel: 'typo', annotations: { readOnlyHint: 'yes' }, icons: 'x', imported: { extra: 1 } }
    let thrown: unknown
    try {
      tools.register(rawTool('bad', undefined, { meta: bad as unknown as ToolMeta }))
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ToolRegistrationError)
    expect((thrown as ToolRegistrationError).issues).toEqual([
      'definition.meta.titel: not a meta field (expected title, annotations, icons, execution, _meta, imported)',
      'definition.meta.annotations.readOnlyHint: expected a boolean',
      'definition.meta.icons: expected an array of objects',
      'definition.meta.imported.extra: not a field (expected outputSchema)',
    ])
    expect(tools.get('bad')).toBeUndefined()
    expect(() => tools.register(rawTool('cyclic', undefined, { meta: cyclic() }))).toThrow(/definition\.meta/)
    expect(() =>
      defineTool({
        name: 'typed',
        description: 'd',
        parameters: {},
        output: { schema: { type: 'string' }, render: () => [] },
        execute: async () => 'x',
        meta: 'no' as unknown as ToolMeta,
      }),
    ).toThrow(/meta: expected an object when present/)
  })
})

function cyclic(): ToolMeta {
  const loop: Record<string, unknown> = {}
  loop.self = loop
  return { _meta: loop as never }
}

class ContentError extends ToolgateError {
  readonly code = 'TOOL_ERROR' as const
  constructor(content: unknown) {
    super('it broke')
    Object.defineProperty(this, 'content', { value: content })
  }
}

describe("a failure's own content rides the thrown error (issue 35, item 7)", () => {
  async function failWith(thrown: unknown) {
    const { tools } = await createToolRuntime()
    const definition: ToolDefinition = rawTool('fails', async () => {
      throw thrown
    })
    tools.register(definition)
    return tools.execute({ callId: 'c', name: 'fails', arguments: {}, signal: signal() })
  }

  it("a ToolgateError's content becomes the failed result's content", async () => {
    const blocks = [
      { type: 'text', text: 'it broke' },
      { type: 'image', data: 'AA==', mediaType: 'image/png' },
    ]
    const result = await failWith(new ContentError(blocks))
    expect(result.isError).toBe(true)
    expect(result.content).toEqual(blocks)
    expect(result.isError && result.error).toEqual({ message: 'it broke', info: { name: 'Error', code: 'TOOL_ERROR' } })
  })

  it('invalid content, or content on an error that is not a ToolgateError, leaves the message', async () => {
    const invalid = await failWith(new ContentError([{ type: 'nope' }]))
    expect(invalid.content).toEqual([{ type: 'text', text: 'it broke' }])
    const plain = Object.assign(new Error('plain'), { content: [{ type: 'text', text: 'not this' }] })
    expect((await failWith(plain)).content).toEqual([{ type: 'text', text: 'plain' }])
  })
})
