// Issue 37 (item 5) with issue 35 (trace context in `_meta`): the trace id of a request's W3C
// `traceparent`, and the pipeline carrying it to the call and its nested calls.
import { describe, expect, it } from 'vitest'
import { createToolRuntime, defineTool } from '../../src/index.js'
import { traceIdOf } from '../../src/mcp/protocol/trace-context.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'

describe('traceIdOf', () => {
  it('reads the trace id of a valid traceparent', () => {
    expect(traceIdOf({ traceparent: `00-${TRACE}-00f067aa0ba902b7-01` })).toBe(TRACE)
    // A later version may append fields.
    expect(traceIdOf({ traceparent: `01-${TRACE}-00f067aa0ba902b7-00-extra` })).toBe(TRACE)
  })

  it.each([
    ['no meta', undefined],
    ['no traceparent', {}],
    ['not a string', { traceparent: 42 }],
    ['upper case', { traceparent: `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01` }],
    ['all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }],
    ['all-zero parent id', { traceparent: `00-${TRACE}-0000000000000000-01` }],
    ['version ff', { traceparent: `ff-${TRACE}-00f067aa0ba902b7-01` }],
    ['version 00 with an extra field', { traceparent: `00-${TRACE}-00f067aa0ba902b7-01-x` }],
    ['a short trace id', { traceparent: `00-${TRACE.slice(1)}-00f067aa0ba902b7-01` }],
    ['a huge header', { traceparent: `00-${TRACE}-00f067aa0ba902b7-01-${'a'.repeat(1000)}` }],
  ])('ignores %s', (_case, meta) => {
    expect(traceIdOf(meta)).toBeUndefined()
  })
})

describe('ToolExecuteOptions.traceId', () => {
  it('is carried on the call and inherited by its nested calls; a malformed one is INVALID_INPUT', async () => {
    await using runtime = await createToolRuntime()
    const seen: (string | undefined)[] = []
    runtime.ctx.on('tools/call', (exec) => {
      seen.push(exec.traceId)
    })
    runtime.tools.register(
      defineTool({
        name: 'inner',
        description: 'Nested.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
        execute: async () => 'inner',
      }),
    )
    runtime.tools.register(
      defineTool({
        name: 'outer',
        description: 'Calls inner.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
        execute: async (_args, exec) => {
          const result = await runtime.tools.execute({
            callId: 'n1',
            name: 'inner',
            arguments: {},
            parent: exec.token,
            signal: exec.signal,
          })
          return result.isError ? 'failed' : 'ok'
        },
      }),
    )
    const signal = new AbortController().signal
    const done = await runtime.tools.execute({ callId: 'c1', name: 'outer', arguments: {}, signal }, { traceId: TRACE })
    expect(done.isError).toBe(false)
    expect(seen).toEqual([TRACE, TRACE])
    await runtime.tools.execute({ callId: 'c2', name: 'inner', arguments: {}, signal })
    expect(seen[2]).toBeUndefined()
    const bad = await runtime.tools.execute({ callId: 'c3', name: 'inner', arguments: {}, signal }, { traceId: 'x' })
    expect(bad).toMatchObject({ isError: true, error: { info: { code: 'INVALID_INPUT' } } })
    expect(bad.isError && bad.error.message).toContain('options.traceId')
  })
})
