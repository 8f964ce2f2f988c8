// The idle warm-ups of `toolgate serve` (issue 23, cold start): every sample parses as the real
// messages would, and the steps run one per event-loop turn until stopped.
import { describe, expect, it } from 'vitest'
import { WARM_UPS, warmWhileIdle } from '../../src/gateway/startup-warmups.js'

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('startup warm-ups', () => {
  it('parse samples the MCP SDK schemas accept', () => {
    expect(WARM_UPS.map((step) => step())).toEqual(WARM_UPS.map(() => true))
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
