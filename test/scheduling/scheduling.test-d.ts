import type { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type { ApprovalOutcome, ApprovalService } from '../../src/contract/execution.js'
import type { ToolRuntime } from '../../src/preset/tool-runtime.js'
import {
  type BatchResult,
  type BatchToolRuntime,
  CallbackApproval,
  executeBatch,
  TerminalApproval,
  TimeoutPolicy,
} from '../../src/scheduling/index.js'

declare const ctx: Context

describe('R-SCHED public types', () => {
  it('ctx.tools is a BatchToolRuntime and executeBatch resolves a BatchResult', () => {
    expectTypeOf<ToolRuntime>().toExtend<BatchToolRuntime>()
    expectTypeOf(executeBatch(ctx.tools, [])).toEqualTypeOf<Promise<BatchResult>>()
  })

  it('plugins take their typed configs', () => {
    ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: 1000 })
    ctx.plugin(TimeoutPolicy)
    ctx.plugin(CallbackApproval, { decide: () => ({ kind: 'allowed-once' }) })
    ctx.plugin(CallbackApproval, { decide: async () => ({ kind: 'denied', reason: 'no' }) })
    ctx.plugin(TerminalApproval)
    ctx.plugin(TerminalApproval, { input: process.stdin, output: process.stdout })
    // @ts-expect-error decide must answer an ApprovalOutcome
    ctx.plugin(CallbackApproval, { decide: () => 'yes' })
    // @ts-expect-error defaultTimeoutMs is a number
    ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: '5s' })
  })

  it('both approval services implement the contract', () => {
    expectTypeOf<CallbackApproval>().toExtend<ApprovalService>()
    expectTypeOf<TerminalApproval>().toExtend<ApprovalService>()
    expectTypeOf<ReturnType<ApprovalService['request']>>().toEqualTypeOf<Promise<ApprovalOutcome>>()
  })
})
