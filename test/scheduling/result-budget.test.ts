import { describe, expect, it } from 'vitest'
import { type CodeDispatchRecord, RUN_CODE_NAME } from '../../src/code-mode/index.js'
import type { ContentBlock } from '../../src/contract/content.js'
import type { ToolExecutionResult, ToolRunContext } from '../../src/contract/execution.js'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'
import { createToolRuntime } from '../../src/index.js'
import { capContent, ResultBudget } from '../../src/scheduling/result-budget.js'

function tool(
  name: string,
  body: (args: unknown, exec: ToolRunContext) => Promise<unknown>,
  render: (value: unknown) => ContentBlock[] = (value) => [{ type: 'text', text: String(value) }],
  extra: Partial<ToolDefinition> = {},
): ToolDefinition {
  return {
    name,
    description: `${name} (test tool)`,
    parameters: { type: 'object', properties: {} },
    output: { schema: {}, render: (_args, value) => render(value) },
    execute: body,
    ...extra,
  }
}

const bytesOf = (content: readonly ContentBlock[]): number =>
  content.reduce(
    (n, b) => n + (b.type === 'text' ? Buffer.byteLength(b.text) : b.type === 'image' ? b.data.length : 0),
    0,
  )

const textOf = (result: ToolExecutionResult): string =>
  result.content
    .map((b) => (b.type === 'text' ? b.text : b.type === 'image' ? `<image ${b.data.length}>` : ''))
    .join('\n')

function lines(n: number): string {
  return Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n')
}

const signal = () => new AbortController().signal

describe('ResultBudget', () => {
  it('keeps head and tail of a large text result with a marker naming the cut and the journal record', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(ResultBudget, { maxBytes: 4096 })
    const text = lines(5000)
    tools.register(tool('big', async () => text))
    const result = await tools.execute({ callId: 'call-7', name: 'big', arguments: {}, signal: signal() })
    expect(result.isError).toBe(false)
    // The model-facing content is capped; the value stays whole.
    expect(result.value).toBe(text)
    expect(result.content).toHaveLength(1)
    expect(bytesOf(result.content)).toBeLessThanOrEqual(4096)
    const shown = textOf(result)
    expect(shown.startsWith('line 1\nline 2\n')).toBe(true)
    expect(shown.endsWith('line 4999\nline 5000')).toBe(true)
    const marker = shown.match(/\[… ([\d,]+) of ([\d,]+) bytes cut from the middle of this result; (.*) …\]/)
    expect(marker).not.toBeNull()
    const total = Buffer.byteLength(text)
    expect(Number(marker?.[2].replaceAll(',', ''))).toBe(total)
    // Every cut byte is accounted for: shown text (without the marker line) + cut = total.
    const kept = Buffer.byteLength(shown.replace(`\n${marker?.[0]}\n`, ''))
    expect(kept + Number(marker?.[1].replaceAll(',', ''))).toBe(total)
    expect(marker?.[3]).toBe('the full result is in the journal record for call call-7')
  })

  it('leaves results within the budget untouched, and caps failures too', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(ResultBudget, {})
    tools.register(tool('small', async () => 'tiny'))
    tools.register(
      tool('fails', async () => {
        throw new Error(`boom ${'x'.repeat(100_000)}`)
      }),
    )
    const small = await tools.execute({ callId: 'a', name: 'small', arguments: {}, signal: signal() })
    expect(small.content).toEqual([{ type: 'text', text: 'tiny' }])
    const failed = await tools.execute({ callId: 'b', name: 'fails', arguments: {}, signal: signal() })
    expect(failed.isError).toBe(true)
    expect(bytesOf(failed.content)).toBeLessThanOrEqual(32 * 1024)
    expect(textOf(failed)).toMatch(/bytes cut from the middle/)
    // The durable error keeps the whole message.
    expect(failed.isError && failed.error.message.length).toBeGreaterThan(100_000)
  })

  it('per-tool budgets replace the global one', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(ResultBudget, { maxBytes: 64 * 1024, perTool: { strict: 2048 } })
    const text = 'y'.repeat(10_000)
    tools.register(tool('strict', async () => text))
    tools.register(tool('loose', async () => text))
    const strict = await tools.execute({ callId: 'a', name: 'strict', arguments: {}, signal: signal() })
    const loose = await tools.execute({ callId: 'b', name: 'loose', arguments: {}, signal: signal() })
    expect(bytesOf(strict.content)).toBeLessThanOrEqual(2048)
    expect(textOf(strict)).toMatch(/cut from the middle/)
    expect(textOf(loose)).toBe(text)
  })

  it('counts images by size and leaves out, never cuts, an image that does not fit', () => {
    const image = (n: number): ContentBlock => ({ type: 'image', data: 'A'.repeat(n), mediaType: 'image/png' })
    const content: ContentBlock[] = [
      { type: 'text', text: 'caption' },
      image(1500),
      image(50_000),
      image(600),
      { type: 'text', text: 'the end' },
    ]
    const capped = capContent(content, 4096, 'call-img')
    expect(capped).toBeDefined()
    expect(bytesOf(capped ?? [])).toBeLessThanOrEqual(4096)
    const kinds = (capped ?? []).map((b) => (b.type === 'image' ? `image:${b.data.length}` : 'text'))
    expect(kinds).toEqual(['text', 'image:1500', 'text', 'image:600', 'text'])
    const marker = (capped ?? []).find((b) => b.type === 'text' && b.text.startsWith('[…'))
    expect(marker?.type === 'text' && marker.text).toBe(
      '[… 50,000 of 52,114 bytes cut from the middle of this result (including 1 image of 50,000 bytes); the full result is in the journal record for call call-img …]',
    )
    expect(capContent(content, 64 * 1024, 'x')).toBeUndefined()
  })

  it('counts audio and embedded blobs by their base64 size and leaves them out whole (issue 23)', () => {
    const content: ContentBlock[] = [
      { type: 'text', text: 'caption' },
      { type: 'audio', mediaType: 'audio/wav', data: 'A'.repeat(30_000) },
      { type: 'resource', resource: { uri: 'file:///b', blob: 'B'.repeat(20_000) } },
      { type: 'image', mediaType: 'image/png', data: 'C'.repeat(10_000) },
      { type: 'resource-link', uri: 'file:///r', name: 'r' },
    ]
    const capped = capContent(content, 4096, 'call-av') ?? []
    expect(capped.map((b) => b.type)).toEqual(['text', 'text', 'resource-link'])
    expect(capped[1]?.type === 'text' && capped[1].text).toMatch(
      /\(including 1 image and 2 other non-text blocks of 60,000 bytes\)/,
    )
  })

  it('cuts on UTF-8 character boundaries', () => {
    const text = '가나다라마바사'.repeat(2000)
    const capped = capContent([{ type: 'text', text }], 2048, 'c') ?? []
    expect(capped).toHaveLength(1)
    const shown = capped[0].type === 'text' ? capped[0].text : ''
    expect(shown).not.toContain('\ufffd')
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(2048)
    expect(shown.startsWith('가나다')).toBe(true)
    expect(shown.endsWith('마바사')).toBe(true)
  })

  it('Code Mode programs receive the full value; the run_code result and the sub-call log copy are capped', async () => {
    const { ctx, tools } = await createToolRuntime({ mode: 'code' })
    await ctx.plugin(ResultBudget, { maxBytes: 2048 })
    const text = lines(3000)
    tools.register(tool('big', async () => text))
    const records: CodeDispatchRecord[] = []
    const subResults: ToolExecutionResult[] = []
    ctx.on('tools/code-dispatch', (record) => {
      records.push(record)
    })
    ctx.on('tools/result', (exec, result) => {
      if (exec.parent !== undefined) subResults.push(result)
    })
    const result = await tools.execute({
      callId: 'run-1',
      name: RUN_CODE_NAME,
      arguments: {
        description: 'measure the big output',
        code: 'const t = await tools.big({}); return { length: t.length, last: t.slice(-9), echo: t }',
      },
      signal: signal(),
    })
    expect(result.isError).toBe(false)
    const value = result.value as { result: { length: number; last: string; echo: string } }
    // The program saw every byte.
    expect(value.result.length).toBe(text.length)
    expect(value.result.last).toBe('line 3000')
    expect(value.result.echo).toBe(text)
    // The model sees the run_code result within the budget, marked.
    expect(bytesOf(result.content)).toBeLessThanOrEqual(2048)
    expect(textOf(result)).toMatch(/the full result is in the journal record for call run-1/)
    // The sub-call's own result is whole (what a journal keeps); its log copy is capped and points to it.
    expect(subResults).toHaveLength(1)
    expect(textOf(subResults[0])).toBe(text)
    expect(records).toHaveLength(1)
    expect(bytesOf(records[0].content)).toBeLessThanOrEqual(2048)
    expect(records[0].content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toMatch(
      /the full result is in the journal record for call run-1:code:1/,
    )
  })

  it('runs after the definition’s own finalizeContent and sees its answer', async () => {
    const { ctx, tools } = await createToolRuntime()
    await ctx.plugin(ResultBudget, { maxBytes: 1024 })
    tools.register(
      tool('own', async () => 'short', undefined, {
        finalizeContent: () => [{ type: 'text', text: 'z'.repeat(5000) }],
      }),
    )
    const result = await tools.execute({ callId: 'c', name: 'own', arguments: {}, signal: signal() })
    expect(bytesOf(result.content)).toBeLessThanOrEqual(1024)
    expect(textOf(result)).toMatch(/^z+\n\[… [\d,]+ of 5,000 bytes cut/)
  })

  it('refuses a malformed config with the offending path', async () => {
    const { ctx } = await createToolRuntime()
    // issue 21: a ConfigError with a code and the offending option's path, not a RangeError
    await expect(ctx.plugin(ResultBudget, { maxBytes: 10 })).rejects.toMatchObject({
      name: 'ConfigError',
      code: 'INVALID_CONFIG',
      path: 'ResultBudget config.maxBytes',
      message: 'ResultBudget config.maxBytes: expected an integer number of bytes >= 1024, got 10',
    })
    await expect(ctx.plugin(ResultBudget, { perTool: { bash: 1.5 } })).rejects.toThrow(
      'ResultBudget config.perTool["bash"]: expected an integer number of bytes >= 1024, got 1.5',
    )
  })
})

describe('tools/finalize-content seam', () => {
  it('a throwing listener becomes FINALIZE_FAILED, and listeners see the previous answer in order', async () => {
    const { ctx, tools } = await createToolRuntime()
    const seen: string[] = []
    ctx.on('tools/finalize-content', (_exec, result) => {
      seen.push(textOf(result))
      return [{ type: 'text', text: 'first' }]
    })
    ctx.on('tools/finalize-content', (exec, result) => {
      seen.push(textOf(result))
      if (exec.callId === 'boom') throw new Error('listener bug')
      return undefined
    })
    tools.register(tool('t', async () => 'value'))
    const ok = await tools.execute({ callId: 'ok', name: 't', arguments: {}, signal: signal() })
    expect(ok.content).toEqual([{ type: 'text', text: 'first' }])
    const boom = await tools.execute({ callId: 'boom', name: 't', arguments: {}, signal: signal() })
    expect(boom.isError && boom.error).toEqual({
      message: 'a tools/finalize-content listener failed: listener bug',
      info: { name: 'Error', code: 'FINALIZE_FAILED' },
    })
    expect(seen).toEqual(['value', 'first', 'value', 'first'])
  })
})
