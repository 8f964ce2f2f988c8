// Issue 23 item 3: the content contract holds every MCP content kind. snapshotContent accepts audio,
// resource links and embedded resources with annotations and _meta, and names the exact path of a
// malformed one; the pipeline reports such a render as RENDER_FAILED with that path.
import { describe, expect, it } from 'vitest'
import { type ContentBlock, createToolRuntime } from '../../src/index.js'
import { snapshotContent } from '../../src/runtime/index.js'

const every: ContentBlock[] = [
  { type: 'text', text: 'hi', annotations: { audience: ['user'], priority: 0.5 }, _meta: { a: [1, null] } },
  { type: 'image', mediaType: 'image/png', data: 'AA==', annotations: { lastModified: '2026-01-02T03:04:05Z' } },
  { type: 'audio', mediaType: 'audio/wav', data: 'UklGRg==', _meta: {} },
  {
    type: 'resource-link',
    uri: 'file:///r.pdf',
    name: 'r.pdf',
    title: 'R',
    description: 'd',
    mediaType: 'application/pdf',
    size: 10,
    icons: [{ src: 'https://x/i.png', mediaType: 'image/png', sizes: ['any'], theme: 'dark' }],
  },
  { type: 'resource', resource: { uri: 'file:///t', mediaType: 'text/plain', text: 't', _meta: { x: 1 } } },
  { type: 'resource', resource: { uri: 'file:///b', blob: 'AAEC' }, annotations: { audience: ['assistant'] } },
]

describe('content blocks (issue 23)', () => {
  it('snapshotContent keeps every kind, with its annotations and _meta, as given', () => {
    expect(snapshotContent(every, 'c')).toStrictEqual(every)
  })

  it.each([
    [{ type: 'audio', mediaType: 'audio/wav' }, 'c[0].data: expected a base64 string'],
    [{ type: 'audio', data: 'AA==' }, 'c[0].mediaType: expected a string'],
    [{ type: 'resource-link', uri: 'u' }, 'c[0].name: expected a string'],
    [{ type: 'resource-link', uri: 'u', name: 'n', size: '1' }, 'c[0].size: expected a number of bytes'],
    [{ type: 'resource-link', uri: 'u', name: 'n', title: 5 }, 'c[0].title: expected a string when present'],
    [{ type: 'resource-link', uri: 'u', name: 'n', icons: [{ src: 1 }] }, 'c[0].icons[0].src: expected a string'],
    [
      { type: 'resource-link', uri: 'u', name: 'n', icons: [{ src: 's', theme: 'blue' }] },
      'c[0].icons[0].theme: expected "light" or "dark"',
    ],
    [{ type: 'resource' }, 'c[0].resource: expected the resource contents object'],
    [{ type: 'resource', resource: { text: 't' } }, 'c[0].resource.uri: expected a string'],
    [{ type: 'resource', resource: { uri: 'u', text: 't', blob: 'AA==' } }, 'c[0].resource: expected exactly one'],
    [{ type: 'resource', resource: { uri: 'u' } }, 'c[0].resource: expected exactly one'],
    [{ type: 'resource', resource: { uri: 'u', blob: 5 } }, 'c[0].resource.blob: expected a base64 string'],
    [{ type: 'resource', resource: { uri: 'u', text: 't', _meta: 'm' } }, 'c[0].resource._meta: expected an object'],
    [{ type: 'text', text: 't', annotations: [] }, 'c[0].annotations: expected an object'],
    [
      { type: 'text', text: 't', annotations: { priority: 2 } },
      'c[0].annotations.priority: expected a number from 0 to 1',
    ],
    [{ type: 'text', text: 't', annotations: { audience: ['bot'] } }, 'c[0].annotations.audience[0]: expected "user"'],
    [{ type: 'text', text: 't', annotations: { lastModified: 1 } }, 'c[0].annotations.lastModified: expected an ISO'],
    [{ type: 'image', mediaType: 'image/png', data: 'AA==', _meta: [1] }, 'c[0]._meta: expected an object'],
    [{ type: 'resource_link', uri: 'u', name: 'n' }, 'c[0].type: expected "text", "image", "audio", "resource-link"'],
  ])('a malformed block is refused at its path: %j', (block, message) => {
    expect(() => snapshotContent([block], 'c')).toThrow(message)
  })

  it('a tool rendering a malformed block fails with RENDER_FAILED naming the path', async () => {
    const { tools } = await createToolRuntime()
    tools.register({
      name: 'say',
      description: 'Say.',
      parameters: { type: 'object' },
      output: {
        schema: {},
        render: () => [{ type: 'audio', mediaType: 'audio/wav', data: 7 }] as unknown as ContentBlock[],
      },
      execute: async () => null,
    })
    const result = await tools.execute({
      callId: 'x',
      name: 'say',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.isError).toBe(true)
    expect(result.error?.info?.code).toBe('RENDER_FAILED')
    expect(result.error?.message).toContain('say.output.render()[0].data: expected a base64 string')
  })

  it('a tool may render every kind, and the result carries them unchanged', async () => {
    const { tools } = await createToolRuntime()
    tools.register({
      name: 'all',
      description: 'All kinds.',
      parameters: { type: 'object' },
      output: { schema: {}, render: () => every },
      execute: async () => null,
    })
    const result = await tools.execute({
      callId: 'y',
      name: 'all',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.isError).toBe(false)
    expect(result.content).toStrictEqual(every)
  })
})
