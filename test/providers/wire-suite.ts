// The scenario every provider wire test runs, through runModelLoop and the official SDK client.
import { afterEach, expect, it } from 'vitest'
import { runModelLoop } from '../../src/providers/index.js'
import type { ProviderModel } from '../../src/providers/model.js'
import type { ModelLoopResult } from '../../src/providers/model-loop.js'
import type { ProviderFormat, ProviderMessage } from '../../src/providers/types.js'
import type { FakeServer } from './fake-server.js'
import { checkAbortTurn, checkMainTurn, scenario, TURN_ABORT, TURN_ONE, TURN_TWO } from './scenario.js'

/** One scripted model turn: calls as [id, name, raw argument JSON], or a final text answer. */
export type Turn = readonly (readonly [string, string, string])[] | string

export interface WireSetup<F extends ProviderFormat> {
  readonly server: FakeServer
  /** Request bodies as the server received them, in order. */
  readonly bodies: unknown[]
  readonly model: ProviderModel<F>
  /** Send one more request with `messages`, through the SDK (the server validates it). */
  replay(messages: ProviderMessage<F>[]): Promise<unknown>
}

export interface WireHarness<F extends ProviderFormat> {
  start(script: Turn[]): Promise<WireSetup<F>>
  readonly userMessage: ProviderMessage<F>
  /** Format-specific checks of what the second request carried (the answers to TURN_ONE). */
  checkAnswers(body: unknown, run: ModelLoopResult<F>): void
}

export function wireSuite<F extends ProviderFormat>(harness: WireHarness<F>): void {
  let open: FakeServer | undefined
  afterEach(async () => {
    await open?.close()
    open = undefined
  })

  it('runs a multi-step turn: parallel, exclusive, image, throw, denial, malformed JSON, strict null', async () => {
    const { tools, agent, log, seenArgs } = await scenario()
    const setup = await harness.start([TURN_ONE, TURN_TWO, 'All done.', 'validated'])
    open = setup.server
    const events: string[] = []
    const run = await runModelLoop({
      tools,
      agent,
      model: setup.model,
      messages: [harness.userMessage],
      onEvent: (e) => events.push(e.type === 'tool-result' ? `${e.type}:${e.call.callId}` : e.type),
    })
    expect(setup.server.violations).toEqual([])
    checkMainTurn(run, log, seenArgs)
    expect(setup.bodies).toHaveLength(3)
    harness.checkAnswers(setup.bodies[1], run)
    expect(events.filter((e) => e === 'model-request')).toHaveLength(3)
    expect(events.filter((e) => e.startsWith('tool-result:')).sort()).toEqual(
      [...TURN_ONE, ...TURN_TWO].map(([id]) => `tool-result:${id}`).sort(),
    )
    // The finished conversation is one the API accepts as the next request.
    await setup.replay(run.messages)
    expect(setup.server.violations).toEqual([])
  })

  it('an abort mid-batch still answers every emitted call, and the conversation stays valid', async () => {
    const { tools, agent, slowStarted } = await scenario()
    const setup = await harness.start([TURN_ABORT, 'validated'])
    open = setup.server
    const controller = new AbortController()
    slowStarted.then(() => controller.abort(new Error('user pressed stop')))
    const run = await runModelLoop({
      tools,
      agent,
      model: setup.model,
      messages: [harness.userMessage],
      signal: controller.signal,
    })
    checkAbortTurn(run)
    expect(setup.bodies).toHaveLength(1)
    await setup.replay(run.messages)
    expect(setup.bodies).toHaveLength(2)
    expect(setup.server.violations).toEqual([])
  })
}
