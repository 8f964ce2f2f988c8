// `toolgate serve --http` as an operator sees it: started as a process, probed, scraped.
import { type ChildProcess, spawn } from 'node:child_process'
import { request } from 'node:http'
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format'
import { expect } from 'vitest'
import { BIN } from './helpers.js'
import { killChildren } from './spawn-ready.js'

const children: ChildProcess[] = []

/** SIGKILL every process {@link startServe} started that is still running; resolved once all have exited. */
export function killStarted(): Promise<void> {
  return killChildren(children)
}

/** `toolgate serve --http 0 ...args`; resolves with the MCP port (and the metrics port when one is logged). */
export async function startServe(
  args: string[],
  waitFor = /serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/,
): Promise<{ child: ChildProcess; port: number; stderr: () => string; metricsPort?: number }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  children.push(child)
  let err = ''
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      if (waitFor.test(err)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`toolgate exited with ${code}: ${err}`)))
  })
  const port = Number(/serving MCP at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)?.[1])
  const metrics = /serving metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(err)?.[1]
  return { child, port, stderr: () => err, ...(metrics ? { metricsPort: Number(metrics) } : {}) }
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

export async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

export async function readyz(port: number): Promise<{ status: number; body: unknown; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`)
  const text = await res.text()
  return { status: res.status, body: JSON.parse(text), text }
}

/** GET /metrics, parsed; `text` is the exposition itself. */
export async function scrape(
  port: number,
  headers: Record<string, string> = {},
): Promise<ParsedFamily[] & { text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  const text = await res.text()
  return Object.assign(parsePrometheusTextFormat(text), { text })
}

/**
 * The `_count` of a labelled histogram's series, read from the text: the parser folds every series
 * of a labelled histogram into one, so it cannot tell them apart.
 */
export function histogramCount(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}_count{${labels}} `))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

/** A GET with any Host header (fetch sends its own): the status. */
export function getStatus(port: number, pathname: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: pathname, headers }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
    })
    // on, not once: a second error (a reset after the first) must not go unhandled.
    req.on('error', reject)
    req.end()
  })
}

/** The value of the sample of `name` whose labels include `labels` (undefined when there is none). */
export function sample(
  families: ParsedFamily[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = families.find((f) => f.name === name)
  const found = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
  if (found === undefined) return undefined
  return Number(found.value ?? found.count)
}
