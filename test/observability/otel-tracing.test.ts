import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { RUN_CODE_NAME } from '../../src/code-mode/index.js'
import { OtelTracing } from '../../src/observability/otel-tracing.js'
import { createToolRuntime } from '../../src/preset/create.js'
import { ToolRuntime } from '../../src/preset/tool-runtime.js'
import { createAgent } from '../../src/runtime/agent.js'
import { CallbackApproval } from '../../src/scheduling/approval.js'
import { tool } from '../scheduling/fakes.js'

async function setup(mode: 'native' | 'code' = 'native') {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const { ctx, tools } = await createToolRuntime({ mode })
  await ctx.plugin(OtelTracing, { tracerProvider: provider })
  return { ctx, tools, spans: () => exporter.getFinishedSpans() }
}

const signal = () => new AbortController().signal
const parentId = (span: ReadableSpan) => span.parentSpanContext?.spanId
const events = (span: ReadableSpan) => span.events.map((e) => [e.name, e.attributes])

describe('OtelTracing', () => {
  it('one span per call with the GenAI attributes; failures carry error.type and an ERROR status', async () => {
    const { tools, spans } = await setup()
    tools.register(tool('ok', async () => 1))
    tools.register(
      tool('boom', async () => {
        throw Object.assign(new Error('it broke'), { code: 'E_BROKE' })
      }),
    )
    await tools.execute({ callId: 'c1', name: 'ok', arguments: {}, signal: signal() })
    await tools.execute({ callId: 'c2', name: 'boom', arguments: {}, signal: signal() })
    await tools.execute({ callId: 'c3', name: 'missing', arguments: {}, signal: signal() })
    const [ok, boom, missing] = spans()
    expect(spans()).toHaveLength(3)
    expect(ok.name).toBe('execute_tool ok')
    expect(ok.kind).toBe(SpanKind.INTERNAL)
    expect(ok.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'ok',
      'gen_ai.tool.call.id': 'c1',
      'gen_ai.tool.type': 'function',
      'toolgate.root_call_id': 'c1',
    })
    expect(ok.status.code).toBe(SpanStatusCode.UNSET)
    expect(boom.attributes['error.type']).toBe('E_BROKE')
    expect(boom.status).toEqual({ code: SpanStatusCode.ERROR, message: 'it broke' })
    expect(missing.name).toBe('execute_tool missing')
    expect(missing.attributes['error.type']).toBe('UNKNOWN_TOOL')
  })

  it('Code Mode sub-calls are child spans of their run_code span', async () => {
    const { tools, spans } = await setup('code')
    tools.register(tool('add', async () => 3))
    const result = await tools.execute({
      callId: 'run',
      name: RUN_CODE_NAME,
      arguments: { description: 'two calls', code: 'return [await tools.add({}), await tools.add({})]' },
      signal: signal(),
    })
    expect(result.isError).toBe(false)
    const all = spans()
    const outer = all.find((s) => s.name === `execute_tool ${RUN_CODE_NAME}`)
    const subs = all.filter((s) => s.name === 'execute_tool add')
    expect(outer).toBeDefined()
    expect(subs.map((s) => s.attributes['gen_ai.tool.call.id'])).toEqual(['run:code:1', 'run:code:2'])
    for (const sub of subs) {
      expect(parentId(sub)).toBe(outer?.spanContext().spanId)
      expect(sub.spanContext().traceId).toBe(outer?.spanContext().traceId)
      expect(sub.attributes['toolgate.root_call_id']).toBe('run')
    }
  })

  it('records policy and approval decisions as span events', async () => {
    const { ctx, tools, spans } = await setup()
    const agent = createAgent(ctx, { id: 'agent-1' })
    let answer: 'allowed-once' | 'denied' = 'allowed-once'
    await ctx.plugin(CallbackApproval, {
      decide: () => (answer === 'denied' ? { kind: 'denied', reason: 'no' } : { kind: answer }),
    })
    ctx.on('tools/pre-execute', async (exec, next) => {
      if (exec.name === 'risky') return { kind: 'ask', reason: 'writes files' }
      if (exec.name === 'forbidden') return { kind: 'deny', reason: 'never' }
      return next()
    })
    ctx.on('tools/post-execute', async () => ({ kind: 'block', feedback: [{ type: 'text', text: 'hidden' }] }))
    for (const name of ['risky', 'forbidden']) tools.register(tool(name, async () => 'done'))
    await tools.execute({ callId: 'a', name: 'risky', arguments: {}, agent, signal: signal() })
    answer = 'denied'
    await tools.execute({ callId: 'b', name: 'risky', arguments: {}, agent, signal: signal() })
    await tools.execute({ callId: 'c', name: 'forbidden', arguments: {}, agent, signal: signal() })
    const [allowed, denied, forbidden] = spans()
    expect(allowed.attributes['toolgate.agent.id']).toBe('agent-1')
    expect(events(allowed)).toEqual([
      ['toolgate.policy.decision', { 'toolgate.decision': 'ask', 'toolgate.reason': 'writes files' }],
      ['toolgate.approval.asked', { 'toolgate.reason': 'writes files' }],
      ['toolgate.approval', { 'toolgate.outcome': 'allowed-once', 'toolgate.source': 'service' }],
      ['toolgate.policy.post_decision', { 'toolgate.decision': 'block' }],
    ])
    expect(allowed.attributes['error.type']).toBe('TOOL_BLOCKED')
    expect(events(denied).map(([name]) => name)).toEqual([
      'toolgate.policy.decision',
      'toolgate.approval.asked',
      'toolgate.approval',
      'toolgate.denied',
    ])
    expect(events(denied)[2][1]).toEqual({
      'toolgate.outcome': 'denied',
      'toolgate.source': 'service',
      'toolgate.reason': 'no',
    })
    expect(events(forbidden)).toEqual([
      ['toolgate.policy.decision', { 'toolgate.decision': 'deny', 'toolgate.reason': 'never' }],
      ['toolgate.denied', { 'toolgate.reason': 'Tool "forbidden" was denied: never' }],
    ])
    expect(forbidden.attributes['error.type']).toBe('TOOL_DENIED')
  })

  it('costs nothing when not loaded: no listener is registered and the API is not imported by the root', async () => {
    // A bare service (createToolRuntime() also installs the timeout policy's listener).
    const ctx = new Context()
    await ctx.plugin(ToolRuntime)
    for (const name of ['tools/call', 'tools/pre-execute', 'tools/execute', 'tools/post-execute', 'tools/result']) {
      expect(ctx.events._hooks[name]?.length ?? 0).toBe(0)
    }
    const { readFile } = await import('node:fs/promises')
    const root = await readFile(new URL('../../src/index.ts', import.meta.url), 'utf8')
    expect(root).not.toMatch(/from '@opentelemetry\/api'/)
  })
})
