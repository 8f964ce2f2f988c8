// `GET /metrics` of `serve --http`: the gateway's calls, approvals, upstreams, HTTP requests and
// store appends in the Prometheus text format, with prom-client. Call metrics are fed from the
// runtime's pipeline events (`tools/call`, `tools/approval-*`, `tools/result`) on the serving
// agent's scope, as the journal is: every path a call takes ends in one `tools/result`.
// prom-client is loaded only here, and this module only by `serve --http`.
import type { ServerResponse } from 'node:http'
import type { Counter, Histogram, Registry } from 'prom-client'
import type { ToolExecution, ToolExecutionResult, ToolExecutionToken } from '../contract/execution.js'
import type { Store } from '../journal/store.js'
import { directListener } from '../runtime/index.js'
import type { MetricsConfig } from './config-operations.js'
import type { Gateway } from './gateway.js'

/** A call's outcome as `toolgate_calls_total` labels it. */
export type CallOutcome = 'ok' | 'error' | 'denied' | 'timeout' | 'cancelled'

/** The label of a call of a tool nobody serves: the name is the client's text, not a tool. */
export const UNKNOWN_TOOL_LABEL = '(unknown)'

const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
const APPROVAL_BUCKETS = [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800]
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

export interface GatewayMetrics {
  readonly registry: Registry
  /** Count an HTTP response of the MCP port by its status once it ends (sent, or dropped). */
  countResponse(res: ServerResponse): void
  /** Count responses already sent by their status (what serve's first script answered before the metrics existed). */
  countSent(statuses: readonly number[]): void
  /** Time every append of `store` (the journal's writes). */
  timeAppends(store: Store): void
  /** Count a config reload (SIGHUP): applied, or refused with the old config kept. */
  countReload(result: ReloadResult): void
  /** Answer a scrape. */
  serve(res: ServerResponse): Promise<void>
}

/** How a config reload ended, as `toolgate_config_reloads_total` labels it. */
export type ReloadResult = 'ok' | 'refused'

/** What a failed result's code says about how the call ended. */
export function outcomeOf(result: Readonly<ToolExecutionResult>): CallOutcome {
  if (!result.isError) return 'ok'
  switch (result.error.info?.code) {
    case 'TOOL_DENIED':
      return 'denied'
    case 'TOOL_TIMEOUT':
      return 'timeout'
    case 'ABORTED':
    case 'ABORTED_BEFORE_DISPATCH':
      return 'cancelled'
    default:
      return 'error'
  }
}

/** The metrics of `gateway`, in a registry of their own with the process defaults. */
export async function createGatewayMetrics(
  gateway: Pick<Gateway, 'agent' | 'identities' | 'upstreams'>,
  config: MetricsConfig = {},
): Promise<GatewayMetrics> {
  const prom = await import('prom-client')
  const registry = new prom.Registry()
  prom.collectDefaultMetrics({ register: registry })
  const byIdentity = config.identityLabel === true
  const callLabels = byIdentity ? ['tool', 'outcome', 'identity'] : ['tool', 'outcome']
  const calls: Counter = new prom.Counter({
    name: 'toolgate_calls_total',
    help: 'Tool calls by tool and outcome (ok, error, denied, timeout, cancelled).',
    labelNames: callLabels,
    registers: [registry],
  })
  const duration: Histogram = new prom.Histogram({
    name: 'toolgate_call_duration_seconds',
    help: 'Tool call duration from its start in the pipeline to its final result, approval wait included.',
    labelNames: byIdentity ? ['tool', 'identity'] : ['tool'],
    buckets: CALL_BUCKETS,
    registers: [registry],
  })
  const approvals: Counter = new prom.Counter({
    name: 'toolgate_approvals_total',
    help: 'Approval answers by outcome (allowed-once, allowed-always, denied, denied-always, suspended, cancelled).',
    labelNames: ['outcome'],
    registers: [registry],
  })
  const approvalWait: Histogram = new prom.Histogram({
    name: 'toolgate_approval_wait_seconds',
    help: 'Time from an approval request to its answer.',
    buckets: APPROVAL_BUCKETS,
    registers: [registry],
  })
  new prom.Gauge({
    name: 'toolgate_upstream_up',
    help: 'Whether each configured upstream MCP server is connected (1) or down (0).',
    labelNames: ['server'],
    registers: [registry],
    collect() {
      this.reset()
      for (const upstream of gateway.upstreams())
        this.set({ server: upstream.name }, upstream.status === 'connected' ? 1 : 0)
    },
  })
  const requests: Counter = new prom.Counter({
    name: 'toolgate_http_requests_total',
    help: 'HTTP responses of the MCP port by status (health and metrics requests excluded).',
    labelNames: ['status'],
    registers: [registry],
  })
  const limited: Counter = new prom.Counter({
    name: 'toolgate_rate_limited_total',
    help: 'HTTP requests refused with 429 by the per-identity limits (rate, concurrency, sessions).',
    registers: [registry],
  })
  const reloads: Counter = new prom.Counter({
    name: 'toolgate_config_reloads_total',
    help: 'Config reloads (SIGHUP) by result: ok (applied) or refused (invalid, the old config kept).',
    labelNames: ['result'],
    registers: [registry],
  })
  // Both series exist from the start, so a first refusal is a change from 0 an alert can see.
  reloads.labels({ result: 'ok' })
  reloads.labels({ result: 'refused' })
  const appends: Histogram = new prom.Histogram({
    name: 'toolgate_store_append_seconds',
    help: 'Time for the store to acknowledge one journal append.',
    buckets: APPEND_BUCKETS,
    registers: [registry],
  })

  const started = new Map<ToolExecutionToken, number>()
  const asked = new Map<ToolExecutionToken, number>()
  const identityOf = (exec: Readonly<ToolExecution>) => gateway.identities.identityOf(exec.agent)?.subject ?? ''
  const ctx = gateway.agent.ctx
  ctx.on(
    'tools/call',
    directListener((exec) => {
      started.set(exec.token, performance.now())
    }),
  )
  ctx.on('tools/approval-asked', (_request, exec) => {
    asked.set(exec.token, performance.now())
  })
  ctx.on('tools/approval-answered', (_request, outcome, _source, exec) => {
    approvals.inc({ outcome: outcome.kind })
    const at = asked.get(exec.token)
    asked.delete(exec.token)
    if (at !== undefined) approvalWait.observe((performance.now() - at) / 1000)
  })
  // Each label set's children, kept: a call then finds its series by one map lookup instead of
  // prom-client hashing its labels on every inc and observe.
  type Series = { count: (outcome: CallOutcome) => Counter.Internal; time: Histogram.Internal<string> }
  const series = new Map<string, Series>()
  const seriesOf = (tool: string, identity: string | undefined): Series => {
    const key = identity === undefined ? tool : `${tool}\u0000${identity}`
    let found = series.get(key)
    if (found === undefined) {
      const outcomes = new Map<CallOutcome, Counter.Internal>()
      const extra = identity === undefined ? {} : { identity }
      found = {
        count: (outcome) => {
          let child = outcomes.get(outcome)
          if (child === undefined) {
            child = calls.labels({ tool, outcome, ...extra })
            outcomes.set(outcome, child)
          }
          return child
        },
        time: duration.labels({ tool, ...extra }),
      }
      series.set(key, found)
    }
    return found
  }
  ctx.on(
    'tools/result',
    directListener((exec, result) => {
      const at = started.get(exec.token)
      started.delete(exec.token)
      asked.delete(exec.token)
      const tool = !result.isError || result.error.info?.code !== 'UNKNOWN_TOOL' ? exec.name : UNKNOWN_TOOL_LABEL
      const found = seriesOf(tool, byIdentity ? identityOf(exec) : undefined)
      found.count(outcomeOf(result)).inc()
      if (at !== undefined) found.time.observe((performance.now() - at) / 1000)
    }),
  )

  return {
    registry,
    countResponse(res) {
      // 'close', not 'finish': an SSE stream the client drops never finishes, and still counts.
      res.once('close', () => {
        requests.inc({ status: String(res.statusCode) })
        if (res.statusCode === 429) limited.inc()
      })
    },
    countSent(statuses) {
      for (const status of statuses) requests.inc({ status: String(status) })
    },
    timeAppends(store) {
      const append = store.append.bind(store)
      store.append = async (records) => {
        const end = appends.startTimer()
        try {
          return await append(records)
        } finally {
          end()
        }
      }
    },
    countReload(result) {
      reloads.inc({ result })
    },
    async serve(res) {
      const text = await registry.metrics()
      res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(text)
    },
  }
}
