// The idle warm-ups of `toolgate serve` (issue 23, cold start): every sample parses as the real
// messages would, and the steps run one per event-loop turn until stopped.
import { describe, expect, it } from 'vitest'
import { httpWarmUps, WARM_UP_CHECKS, warmUps, warmWhileIdle } from '../../src/gateway/startup-warmups.js'

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('startup warm-ups', () => {
  it('parse samples the MCP SDK schemas accept', async () => {
    const sdk = await import('@modelcontextprotocol/client')
    expect(WARM_UP_CHECKS.map((check) => check(sdk))).toEqual(WARM_UP_CHECKS.map(() => true))
  })

  it('load the SDK v2 client first, then run every check', async () => {
    const [load, ...checks] = warmUps()
    expect(checks.map((check) => check())).toEqual(checks.map(() => false))
    await load()
    expect(checks.map((check) => check())).toEqual(checks.map(() => true))
  })

  it('over HTTP, run the client warm-ups first, then load what opening the port needs, each load succeeding', async () => {
    const steps = httpWarmUps()
    const client = warmUps().length
    const [load, ...rest] = steps
    await load?.()
    // The client's checks, as warmUps() runs them, then the loads: every one resolves (a wrong
    // specifier or a module that throws on load would reject, and warm nothing).
    expect(rest.slice(0, client - 1).map((check) => check())).toEqual(WARM_UP_CHECKS.map(() => true))
    const loads = rest.slice(client - 1)
    expect(loads.length).toBeGreaterThan(0)
    const loaded = await Promise.all(loads.map((step) => step()))
    expect(loaded.every((value) => value !== undefined)).toBe(true)
    const [server] = loaded as [{ Server?: unknown }]
    expect(typeof server.Server).toBe('function')
  })

  it('run one step per turn, go on past a step that throws, and stop when asked', async () => {
    const ran: number[] = []
    const stop = warmWhileIdle([
      () => ran.push(0),
      () => {
        throw new Error('cold')
      },
      () => ran.push(2),
      () => ran.push(3),
    ])
    expect(ran).toEqual([])
    await turn()
    expect(ran).toEqual([0])
    await turn()
    await turn()
    expect(ran).toEqual([0, 2])
    stop()
    await turn()
    await turn()
    expect(ran).toEqual([0, 2])
  })
})
