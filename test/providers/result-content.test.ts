// Issue 23 item 3: every content kind reaches every provider as something it takes. Audio, links and
// binary resources become one-line descriptions (never base64 as text, never dropped), an embedded
// text resource its text, an embedded image blob an image.
import { describe, expect, it } from 'vitest'
import type { ContentBlock, ToolExecutionResult } from '../../src/index.js'
import { toAiSdkTools } from '../../src/providers/ai-sdk/index.js'
import { PROVIDER_FORMATS, type ProviderBatch, toProviderMessages } from '../../src/providers/index.js'
import { modelBlocks } from '../../src/providers/result-content.js'

const AUDIO = Buffer.alloc(12 * 1024, 1).toString('base64')
const BLOB = Buffer.alloc(3000, 2).toString('base64')
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=='

const every: ContentBlock[] = [
  { type: 'text', text: 'plain', annotations: { audience: ['user'] }, _meta: { a: 1 } },
  { type: 'audio', mediaType: 'audio/wav', data: AUDIO },
  {
    type: 'resource-link',
    uri: 'file:///r.pdf',
    name: 'r.pdf',
    title: 'Report',
    mediaType: 'application/pdf',
    size: 2048,
    description: 'The report.',
  },
  { type: 'resource-link', uri: 'https://x/y', name: 'y' },
  { type: 'resource', resource: { uri: 'file:///notes.txt', mediaType: 'text/plain', text: 'the notes' } },
  { type: 'resource', resource: { uri: 'file:///x.bin', mediaType: 'application/octet-stream', blob: BLOB } },
  { type: 'resource', resource: { uri: 'file:///p.png', mediaType: 'image/png', blob: PNG } },
]

const DESCRIPTIONS = [
  '[audio audio/wav, 12 KB]',
  '[resource link: Report <file:///r.pdf> (application/pdf, 2 KB)] The report.',
  '[resource link: y <https://x/y>]',
  '[resource file:///notes.txt (text/plain)]\nthe notes',
  '[resource file:///x.bin: application/octet-stream, 2.9 KB]',
]

describe('content for models (issue 23)', () => {
  it('modelBlocks keeps text and images, describes the rest, and shows an embedded image', () => {
    expect(modelBlocks(every)).toEqual([
      every[0],
      ...DESCRIPTIONS.map((text) => ({ type: 'text', text })),
      { type: 'image', mediaType: 'image/png', data: PNG },
    ])
  })

  const result: ToolExecutionResult = { isError: false, value: null, content: every }
  const batch: ProviderBatch = {
    results: [
      {
        call: { callId: 'k', name: 'kinds' },
        result: { ...result, additionalContexts: [{ role: 'user', content: every }] },
      },
    ],
  }

  it.each(PROVIDER_FORMATS)(
    '%s: each kind is shown or described, no base64 as text, the image as an image',
    (format) => {
      const wire = JSON.stringify(toProviderMessages(format, batch))
      for (const text of DESCRIPTIONS) expect(wire).toContain(JSON.stringify(text).slice(1, -1))
      expect(wire).not.toContain(AUDIO.slice(0, 64))
      expect(wire).not.toContain(BLOB.slice(0, 64))
      expect(wire).toContain(PNG)
    },
  )

  it('the AI SDK tool output describes the kinds too', async () => {
    const set = toAiSdkTools({
      schemas: () => [{ name: 'kinds', description: 'k', parameters: { type: 'object' } }],
      execute: async () => result,
    })
    const output = await set.kinds.toModelOutput?.({ toolCallId: 'k', input: {}, output: result })
    const wire = JSON.stringify(output)
    for (const text of DESCRIPTIONS) expect(wire).toContain(JSON.stringify(text).slice(1, -1))
    expect(wire).not.toContain(AUDIO.slice(0, 64))
    expect(output).toMatchObject({ type: 'content' })
    expect(wire).toContain(PNG)
  })
})
