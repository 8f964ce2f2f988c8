import type { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type {
  Agent,
  ContentBlock,
  JsonValue,
  PostToolDecision,
  PreToolDecision,
  ScopeKey,
  ToolDispatchExecution,
  ToolExecution,
  ToolExecutionResult,
  ToolExecutionToken,
  ToolRuntime,
  ToolSchema,
} from '../../src/index.js'

describe('R-EXEC-14 ToolExecutionResult is the seed’s discriminated union', () => {
  it('narrows on isError', () => {
    const check = (result: ToolExecutionResult) => {
      if (result.isError) {
        expectTypeOf(result.error.message).toEqualTypeOf<string>()
        expectTypeOf(result.value).toEqualTypeOf<undefined>()
        expectTypeOf(result.concludesTurn).toEqualTypeOf<undefined>()
      } else {
        expectTypeOf(result.value).toEqualTypeOf<JsonValue>()
        expectTypeOf(result.concludesTurn).toEqualTypeOf<true | undefined>()
      }
      expectTypeOf(result.content).toEqualTypeOf<ContentBlock[]>()
    }
    expectTypeOf(check).toBeFunction()
  })
})

describe('R-REG-1 Cordis augmentation', () => {
  it('types ctx.tools and the tools/* listeners', () => {
    expectTypeOf<Context['tools']>().toEqualTypeOf<ToolRuntime>()
    const wire = (ctx: Context) => {
      ctx.on('tools/pre-execute', async (exec, next) => {
        expectTypeOf(exec).toEqualTypeOf<ToolExecution>()
        expectTypeOf(next).returns.resolves.toEqualTypeOf<PreToolDecision>()
        return { kind: 'deny', reason: 'x' }
      })
      ctx.on('tools/execute', async (exec, next) => {
        expectTypeOf(exec).toEqualTypeOf<ToolDispatchExecution>()
        exec.signal = AbortSignal.timeout(1)
        // @ts-expect-error identity fields are read-only
        exec.name = 'other'
        return next()
      })
      ctx.on('tools/post-execute', async (_exec, _result, next): Promise<PostToolDecision> => next())
      // @ts-expect-error a post-execute decision may not replace both content and value
      const both: PostToolDecision = { kind: 'accept', value: 1, content: [] }
      return both
    }
    expectTypeOf(wire).toBeFunction()
  })

  it('takes an Agent as the scope and returns schemas without callbacks', () => {
    expectTypeOf<ScopeKey>().toEqualTypeOf<Agent>()
    expectTypeOf<ReturnType<ToolRuntime['schemas']>>().toEqualTypeOf<ToolSchema[]>()
    expectTypeOf<keyof ToolSchema>().toEqualTypeOf<'name' | 'description' | 'parameters'>()
    expectTypeOf<ToolExecution['token']>().toEqualTypeOf<ToolExecutionToken>()
  })
})
