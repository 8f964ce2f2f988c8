// Standard Schema typing (issue 17): `execute`, `render` and the policy callbacks are typed from the
// schema's output type, for zod 4, valibot (through toStandardJsonSchema) and arktype.
import { toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import * as v from 'valibot'
import { describe, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import type { ToolRunContext } from '../../src/contract/execution.js'
import { defineTool, type ToolArgsOf, type ToolValueOf } from '../../src/schema/index.js'

describe('defineTool with a Standard JSON Schema', () => {
  it('zod: args are the output type (a defaulted field is present), the return is checked', () => {
    const tool = defineTool({
      name: 'z',
      description: '',
      parameters: z.object({ path: z.string(), limit: z.int().optional(), mode: z.enum(['a', 'b']).default('a') }),
      output: {
        schema: z.object({ size: z.number() }),
        render: (args, value) => {
          expectTypeOf(args.mode).toEqualTypeOf<'a' | 'b'>()
          expectTypeOf(value).toEqualTypeOf<{ size: number }>()
          return []
        },
      },
      needsApproval: (args) => args.path.startsWith('/'),
      isConcurrencySafe: (args) => args.limit === undefined,
      execute: async (args, exec) => {
        expectTypeOf(args).toEqualTypeOf<{ path: string; mode: 'a' | 'b'; limit?: number | undefined }>()
        expectTypeOf(exec).toEqualTypeOf<ToolRunContext>()
        return { size: args.path.length }
      },
    })
    expectTypeOf<ToolArgsOf<typeof tool>>().toEqualTypeOf<{
      path: string
      mode: 'a' | 'b'
      limit?: number | undefined
    }>()
    expectTypeOf<ToolValueOf<typeof tool>>().toEqualTypeOf<{ size: number }>()

    defineTool({
      name: 'wrong',
      description: '',
      parameters: z.object({ n: z.number() }),
      output: { schema: z.string(), render: () => [] },
      // @ts-expect-error: execute must return the output schema's type (string)
      execute: async ({ n }) => n,
    })
    defineTool({
      name: 'wrong-arg',
      description: '',
      parameters: z.object({ n: z.number() }),
      output: { schema: z.string(), render: () => [] },
      // @ts-expect-error: n is a number, not a string
      execute: async ({ n }) => n.toUpperCase(),
    })
  })

  it('mixes a Standard Schema with the DSL', () => {
    const tool = defineTool({
      name: 'mixed',
      description: '',
      parameters: { q: { type: 'string', required: true } },
      output: { schema: z.array(z.string()), render: () => [] },
      execute: async ({ q }) => [q],
    })
    expectTypeOf<ToolArgsOf<typeof tool>>().toEqualTypeOf<{ q: string }>()
    expectTypeOf<ToolValueOf<typeof tool>>().toEqualTypeOf<string[]>()
  })

  it('valibot and arktype', () => {
    const vt = defineTool({
      name: 'v',
      description: '',
      parameters: toStandardJsonSchema(v.object({ n: v.number(), label: v.optional(v.string()) })),
      output: { schema: toStandardJsonSchema(v.boolean()), render: () => [] },
      execute: async (args) => {
        expectTypeOf(args).toEqualTypeOf<{ n: number; label?: string | undefined }>()
        return args.n > 0
      },
    })
    expectTypeOf<ToolValueOf<typeof vt>>().toEqualTypeOf<boolean>()
    const at = defineTool({
      name: 'a',
      description: '',
      parameters: type({ n: 'number', 'tag?': "'x' | 'y'" }),
      output: { schema: type('string'), render: () => [] },
      execute: async (args) => {
        expectTypeOf(args.n).toEqualTypeOf<number>()
        expectTypeOf(args.tag).toEqualTypeOf<'x' | 'y' | undefined>()
        return String(args.n)
      },
    })
    expectTypeOf<ToolValueOf<typeof at>>().toEqualTypeOf<string>()
  })
})
