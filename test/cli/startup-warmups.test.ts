// The idle warm-ups of `toolgate serve` (issue 23, cold start): every sample parses as the real
// messages would, and the steps run one per event-loop turn until stopped.
import { describe, expect, it } from 'vitest'
import { httpWarmUps, serverWarmUp, WARM_UP_CHECKS, warmUps, warmWhileIdle } from '../../src/gateway/startup-warmups.js'

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

  it('over HTTP, run the client warm-ups first, then load what opening the port needs and answer one session (issue 35, Performance)', async () => {
    const steps = httpWarmUps()
    const client = warmUps().length
    // In order, each waited for, as warmWhileIdle runs them: a wrong specifier or a module that
    // throws on load would reject here, and warm nothing.
    const values: unknown[] = []
    for (const step of steps) values.push(await step())
    expect(values.slice(1, client)).toEqual(WARM_UP_CHECKS.map(() => true))
    const [, session, ...loads] = values.slice(client)
    // The server package is loaded into the steps' own closure; the step after it answered a session with it.
    expect(session).toBe(true)
    expect(loads.length).toBeGreaterThan(0)
    expect(loads.every((value) => value !== undefined)).toBe(true)
  })

  it("answer a first client's initialize and tools/list on a throwaway server, again and again", async () => {
    const sdk = await import('@modelcontextprotocol/server')
    expect(await serverWarmUp(sdk)).toBe(true)
    // Nothing of the first run is left to change the second (the server and its pair were closed).
    expect(await serverWarmUp(sdk)).toBe(true)
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
