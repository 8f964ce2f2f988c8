import { createRequire } from 'node:module'
import type * as OtelApi from '@opentelemetry/api'
import type { Context } from 'cordis'
import type { ToolExecution, ToolExecutionResult, ToolExecutionToken } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import { directListener } from '../runtime/index.js'
import { parseTraceparent } from '../util/traceparent.js'

/** The part of an OpenTelemetry `TracerProvider` the plugin uses (structural, so no type import is needed). */
export interface OtelTracerProviderLike {
  getTracer(name: string, version?: string): unknown
}

/** Config of {@link OtelTracing}. */
export interface OtelTracingConfig {
  /** Where tracers come from; default the global provider (`trace.getTracerProvider()`). */
  readonly tracerProvider?: OtelTracerProviderLike
  /** Instrumentation scope name (default `toolgate`). */
  readonly tracerName?: string
}

/** Per-call tracing state. */
interface CallSpan {
  readonly span: OtelApi.Span
}

type Api = typeof OtelApi

/** Loads `@opentelemetry/api` only when the plugin is constructed: the package root never imports it. */
function loadApi(): Api {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as Api
  } catch (error) {
    throw new ConfigError(
      'OtelTracing',
      `needs the optional peer dependency @opentelemetry/api (npm install @opentelemetry/api): ${(error as Error).message}`,
    )
  }
}

/**
 * One OpenTelemetry span per tool call, following the GenAI semantic conventions: span name
 * `execute_tool {gen_ai.tool.name}`, kind `INTERNAL`, attributes `gen_ai.operation.name`
 * (`execute_tool`), `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` (`function`),
 * and on failure `error.type` (the result's error code) with an `ERROR` status. A Code Mode
 * sub-call's span is a child of its `run_code` span. Policy decisions are span events:
 * `toolgate.policy.decision` (the pre-execute answer), `toolgate.approval.asked` and
 * `toolgate.approval` (the approval step's outcome and who gave it: the service, a standing rule, a
 * decision), `toolgate.policy.post_decision` (the post-execute answer) and `toolgate.denied` (a
 * denial, with its reason). A call whose request carried W3C trace context (`traceContext`, an MCP
 * request's `_meta.traceparent`) has the caller's span as its remote parent. The span starts when the call enters the pipeline (`tools/call`). The body runs with the span active, so
 * instrumentation inside a tool nests under it when a context manager is registered.
 *
 * Nothing here runs unless the plugin is loaded: `ctx.plugin(OtelTracing, { tracerProvider })`.
 */
export class OtelTracing {
  private readonly api: Api
  private readonly tracer: OtelApi.Tracer
  private readonly calls = new Map<ToolExecutionToken, CallSpan>()

  constructor(ctx: Context, config: OtelTracingConfig = {}) {
    this.api = loadApi()
    const provider = config?.tracerProvider ?? this.api.trace.getTracerProvider()
    if (typeof provider?.getTracer !== 'function')
      throw new ConfigError('OtelTracing config.tracerProvider', 'expected an object with getTracer()')
    const name = config?.tracerName ?? 'toolgate'
    if (typeof name !== 'string' || name === '')
      throw new ConfigError('OtelTracing config.tracerName', 'expected a non-empty string')
    this.tracer = provider.getTracer(name) as OtelApi.Tracer

    ctx.on(
      'tools/call',
      directListener((exec) => {
        this.open(exec)
      }),
    )
    ctx.on('tools/approval-asked', (request, exec) => {
      const attributes: OtelApi.Attributes = {}
      if (request.reason !== null) attributes['toolgate.reason'] = request.reason
      this.calls.get(exec.token)?.span.addEvent('toolgate.approval.asked', attributes)
    })
    ctx.on('tools/approval-answered', (_request, outcome, source, exec) => {
      const attributes: OtelApi.Attributes = { 'toolgate.outcome': outcome.kind, 'toolgate.source': source }
      if (typeof outcome.reason === 'string') attributes['toolgate.reason'] = outcome.reason
      this.calls.get(exec.token)?.span.addEvent('toolgate.approval', attributes)
    })
    // Prepended, so these wrappers are outermost and see the final decisions of every other policy.
    ctx.on(
      'tools/pre-execute',
      async (exec, next) => {
        const call = this.open(exec)
        const decision = await next()
        const kind = typeof decision === 'object' && decision !== null ? String(decision.kind) : String(decision)
        const attributes: OtelApi.Attributes = { 'toolgate.decision': kind }
        const reason = (decision as { reason?: unknown } | null)?.reason
        if (typeof reason === 'string') attributes['toolgate.reason'] = reason
        call.span.addEvent('toolgate.policy.decision', attributes)
        return decision
      },
      { prepend: true },
    )
    ctx.on(
      'tools/execute',
      (exec, next) => {
        const call = this.open(exec)
        const api = this.api
        return api.context.with(api.trace.setSpan(api.context.active(), call.span), next)
      },
      { prepend: true },
    )
    ctx.on(
      'tools/post-execute',
      async (exec, _result, next) => {
        const decision = await next()
        const kind = typeof decision === 'object' && decision !== null ? String(decision.kind) : String(decision)
        this.calls.get(exec.token)?.span.addEvent('toolgate.policy.post_decision', { 'toolgate.decision': kind })
        return decision
      },
      { prepend: true },
    )
    ctx.on(
      'tools/result',
      directListener((exec, result) => this.close(exec, result)),
      { prepend: true },
    )
  }

  /** The span of a call, started on first sight; a sub-call's parent is its transport call's span. */
  private open(
    exec: Pick<ToolExecution, 'token' | 'name' | 'callId' | 'rootCallId' | 'parent' | 'agent' | 'traceContext'>,
  ): CallSpan {
    let call = this.calls.get(exec.token)
    if (call !== undefined) return call
    const api = this.api
    const parent = exec.parent === undefined ? undefined : this.calls.get(exec.parent)
    const parentContext = parent
      ? api.trace.setSpan(api.context.active(), parent.span)
      : this.remoteParent(exec.traceContext)
    const attributes: OtelApi.Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': exec.name,
      'gen_ai.tool.call.id': exec.callId,
      'gen_ai.tool.type': 'function',
      'toolgate.root_call_id': exec.rootCallId,
    }
    if (exec.agent !== undefined) attributes['toolgate.agent.id'] = exec.agent.id
    const span = this.tracer.startSpan(
      `execute_tool ${exec.name}`,
      { kind: api.SpanKind.INTERNAL, attributes },
      parentContext,
    )
    call = { span }
    this.calls.set(exec.token, call)
    return call
  }

  /**
   * The context whose remote span is the caller's (the request's `traceparent`, with its
   * `tracestate`), so the call's span joins the caller's trace; the active context without one.
   */
  private remoteParent(carried: ToolExecution['traceContext']): OtelApi.Context {
    const api = this.api
    const active = api.context.active()
    const fields = parseTraceparent(carried?.traceparent)
    if (carried === undefined || fields === undefined) return active
    return api.trace.setSpanContext(active, {
      traceId: fields.traceId,
      spanId: fields.parentId,
      // Only the sampled bit is defined; the others are the caller's to set, not ours to keep.
      traceFlags: fields.flags & api.TraceFlags.SAMPLED,
      isRemote: true,
      ...(carried.tracestate === undefined ? {} : { traceState: api.createTraceState(carried.tracestate) }),
    })
  }

  private close(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): void {
    const call = this.open(exec)
    this.calls.delete(exec.token)
    const { span } = call
    if (result.isError) {
      const code = result.error.info?.code ?? 'TOOL_ERROR'
      if (code === 'TOOL_DENIED') span.addEvent('toolgate.denied', { 'toolgate.reason': result.error.message })
      span.setAttribute('error.type', code)
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: result.error.message })
    }
    span.end()
  }
}
