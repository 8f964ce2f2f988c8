// Issue 37, items 1 and 2: `serve --http` answers GET /healthz, GET /readyz (a "required": true
// upstream down, then up) and GET /metrics in the Prometheus text format, parsed with a Prometheus
// text parser, whose counters match the calls made. The built CLI, real processes, 127.0.0.1.
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir, writeConfig } from './helpers.js'
import {
  getStatus,
  histogramCount,
  killStarted,
  readyz,
  sample,
  scrape,
  startServe,
  stop,
  until,
} from './ops-helpers.js'

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/upstream-mcp-server.mjs')
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

let work: { dir: string; cleanup: () => Promise<void> }
beforeAll(async () => {
  work = await tempDir()
})
afterAll(async () => {
  await killStarted()
  await work?.cleanup()
})

async function connect(port: number, token?: string): Promise<Client> {
  const client = new Client({ name: 'ops-test', version: '1.0.0' })
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers } }),
  )
  return client
}

describe('GET /healthz and /readyz (issue 37, item 1)', { timeout: 120_000 }, () => {
  it('readiness waits for the required upstream, not for one that is not required, and names neither', async () => {
    const flag = path.join(work.dir, 'upstream-may-start')
    // Exits at once until the flag file exists: down, retried every 100-200 ms, then up.
    const gated = `test -f '${flag}' && exec '${process.execPath}' '${FIXTURE}'`
    const config = await writeConfig(
      work.dir,
      {
        files: false,
        reconnect: { initialDelayMs: 100, maxDelayMs: 200 },
        servers: {
          githubish: { command: 'sh', args: ['-c', gated], required: true },
          optionalone: { command: 'sh', args: ['-c', 'exit 1'] },
        },
      },
      'ready.json',
    )
    const { child, port } = await startServe(['--config', config])
    try {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`)
      expect(health.status).toBe(200)
      const down = await readyz(port)
      expect(down.status).toBe(503)
      expect(down.body).toEqual({ ready: false, notReady: ['upstreams'] })
      // Neither a server's config name nor a tool name.
      expect(down.text).not.toMatch(/githubish|optionalone|echo/)
      // Probes come by the pod's address: no Host check, no token.
      expect(await getStatus(port, '/readyz', { host: '10.1.2.3:8080' })).toBe(503)
      expect(await getStatus(port, '/healthz', { host: '10.1.2.3:8080' })).toBe(200)
      // ... which /mcp refuses.
      expect(await getStatus(port, '/mcp', { host: '10.1.2.3:8080' })).toBe(403)
      const upBefore = await scrape(port)
      expect(sample(upBefore, 'toolgate_upstream_up', { server: 'githubish' })).toBe(0)

      await writeFile(flag, '')
      await until(async () => (await readyz(port)).status === 200, 'the required upstream to connect')
      expect((await readyz(port)).body).toEqual({ ready: true, notReady: [] })
      const upAfter = await scrape(port)
      expect(sample(upAfter, 'toolgate_upstream_up', { server: 'githubish' })).toBe(1)
      expect(sample(upAfter, 'toolgate_upstream_up', { server: 'optionalone' })).toBe(0)
    } finally {
      await stop(child)
    }
  })

  it('with "auth", health and readiness need no token; /metrics on the MCP port needs one', async () => {
    const config = await writeConfig(
      work.dir,
      { files: false, auth: { tokens: [{ sha256: sha256('ops-token'), subject: 'ops' }] } },
      'auth.json',
    )
    const { child, port } = await startServe(['--config', config])
    try {
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
      expect((await readyz(port)).status).toBe(200)
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401)
      const families = await scrape(port, { authorization: 'Bearer ops-token' })
      expect(families.some((f) => f.name === 'process_cpu_user_seconds_total')).toBe(true)
      // Not for another Host (DNS rebinding), as /mcp.
      expect(await getStatus(port, '/metrics', { host: 'evil.example:80', authorization: 'Bearer ops-token' })).toBe(
        403,
      )
    } finally {
      await stop(child)
    }
  })
})

describe('GET /metrics (issue 37, item 2)', { timeout: 120_000 }, () => {
  it('counts the calls made by tool and outcome (ok, error, denied), their durations and the approvals', async () => {
    const config = await writeConfig(
      work.dir,
      {
        files: false,
        servers: { up: { command: process.execPath, args: [FIXTURE] } },
        // The client declares no elicitation: an ask is denied.
        policy: { ask: ['up__pid'] },
      },
      'metrics.json',
    )
    const { child, port } = await startServe(['--config', config])
    try {
      const client = await connect(port)
      for (const text of ['a', 'b', 'c']) await client.callTool({ name: 'up__echo', arguments: { text } })
      const failed = await client.callTool({ name: 'up__fail', arguments: {} })
      expect(failed.isError).toBe(true)
      const denied = await client.callTool({ name: 'up__pid', arguments: {} })
      expect(denied.isError).toBe(true)
      const unknown = await client.callTool({ name: 'secret-looking-name', arguments: {} })
      expect(unknown.isError).toBe(true)
      await client.close()

      const families = await scrape(port)
      expect(sample(families, 'toolgate_calls_total', { tool: 'up__echo', outcome: 'ok' })).toBe(3)
      expect(sample(families, 'toolgate_calls_total', { tool: 'up__fail', outcome: 'error' })).toBe(1)
      expect(sample(families, 'toolgate_calls_total', { tool: 'up__pid', outcome: 'denied' })).toBe(1)
      expect(sample(families, 'toolgate_calls_total', { tool: '(unknown)', outcome: 'error' })).toBe(1)
      const total = families.find((f) => f.name === 'toolgate_calls_total')?.metrics ?? []
      expect(total.reduce((sum, m) => sum + Number(m.value), 0)).toBe(6)
      // A name the client made up is not a label; nor is any identity.
      expect(JSON.stringify(families)).not.toContain('secret-looking-name')
      expect(
        total.every(
          (m) =>
            Object.keys(m.labels ?? {})
              .sort()
              .join() === 'outcome,tool',
        ),
      ).toBe(true)
      const duration = families.find((f) => f.name === 'toolgate_call_duration_seconds')
      expect(duration?.type).toBe('HISTOGRAM')
      expect(histogramCount(families.text, 'toolgate_call_duration_seconds', 'tool="up__echo"')).toBe(3)
      expect(histogramCount(families.text, 'toolgate_call_duration_seconds', 'tool="up__fail"')).toBe(1)
      expect(sample(families, 'toolgate_approvals_total', { outcome: 'denied' })).toBe(1)
      expect(sample(families, 'toolgate_approval_wait_seconds')).toBe(1)
      expect(sample(families, 'toolgate_upstream_up', { server: 'up' })).toBe(1)
      expect(sample(families, 'toolgate_http_requests_total', { status: '200' })).toBeGreaterThanOrEqual(6)
      expect(sample(families, 'toolgate_rate_limited_total')).toBe(0)
      expect(families.find((f) => f.name === 'toolgate_store_append_seconds')?.type).toBe('HISTOGRAM')
      // The process defaults.
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
      ])
        expect(families.some((f) => f.name === name)).toBe(true)
    } finally {
      await stop(child)
    }
  })

  it('--metrics-port serves them on a port of their own, not for browsers; identityLabel labels calls by subject', async () => {
    const config = await writeConfig(
      work.dir,
      {
        files: false,
        servers: { up: { command: process.execPath, args: [FIXTURE] } },
        auth: { tokens: [{ sha256: sha256('alice-token'), subject: 'alice' }] },
        limits: { rate: { perSecond: 0.001, burst: 6 } },
        metrics: { identityLabel: true },
      },
      'port.json',
    )
    const { child, port, metricsPort } = await startServe(
      ['--config', config, '--metrics-port', '0'],
      /serving MCP at http:\/\/127\.0\.0\.1:\d+\/mcp/,
    )
    try {
      expect(metricsPort).toBeTypeOf('number')
      expect(
        (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'Bearer alice-token' } })).status,
      ).toBe(404)
      const client = await connect(port, 'alice-token')
      await client.callTool({ name: 'up__echo', arguments: { text: 'x' } })
      // The burst is spent: the next requests are refused with 429.
      let refused = 0
      for (let i = 0; i < 6 && refused === 0; i++)
        await client.callTool({ name: 'up__echo', arguments: { text: 'y' } }).catch(() => {
          refused++
        })
      expect(refused).toBe(1)
      const families = await scrape(metricsPort as number)
      expect(
        sample(families, 'toolgate_calls_total', { tool: 'up__echo', outcome: 'ok', identity: 'alice' }),
      ).toBeGreaterThanOrEqual(1)
      // The client's own GET stream may be refused too: every 429 is counted, and only those.
      const limited = sample(families, 'toolgate_rate_limited_total') ?? 0
      expect(limited).toBeGreaterThanOrEqual(1)
      expect(sample(families, 'toolgate_http_requests_total', { status: '429' })).toBe(limited)
      const browser = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
        headers: { 'sec-fetch-site': 'same-origin' },
      })
      expect(browser.status).toBe(403)
      expect((await fetch(`http://127.0.0.1:${metricsPort}/mcp`)).status).toBe(404)
      await client.close().catch(() => {})
    } finally {
      await stop(child)
    }
  })
})
