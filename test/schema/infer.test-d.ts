import { describe, expectTypeOf, it } from 'vitest'
import type { ToolRunContext } from '../../src/contract/execution.js'
import type { JsonValue } from '../../src/json/index.js'
import {
  defineTool,
  type InferArgs,
  type InferValue,
  type ParameterSchemaSpec,
  type ToolArgsOf,
  type ToolDefinition,
  type ToolValueOf,
  type ValueSchemaSpec,
} from '../../src/schema/index.js'

describe('R-DSL-4 InferArgs', () => {
  it('required: true keys are required, others optional', () => {
    const params = {
      path: { type: 'string', required: true },
      limit: { type: 'integer' },
      force: { type: 'boolean', required: true },
    } as const satisfies ParameterSchemaSpec
    expectTypeOf<InferArgs<typeof params>>().toEqualTypeOf<{ path: string; force: boolean; limit?: number }>()
  })

  it('literal enums and consts are honoured', () => {
    const params = {
      mode: { type: 'string', enum: ['read', 'write'], required: true },
      level: { type: 'integer', enum: [1, 2, 3] },
      tag: { type: 'string', const: 'fixed', required: true },
      flag: { type: 'boolean', const: true, required: true },
      nothing: { type: 'null', required: true },
    } as const satisfies ParameterSchemaSpec
    expectTypeOf<InferArgs<typeof params>>().toEqualTypeOf<{
      mode: 'read' | 'write'
      tag: 'fixed'
      flag: true
      nothing: null
      level?: 1 | 2 | 3
    }>()
  })

  it('a wide ParameterSchemaSpec infers a JsonValue record', () => {
    expectTypeOf<InferArgs<ParameterSchemaSpec>>().toEqualTypeOf<{ [key: string]: JsonValue }>()
  })
})

describe('R-DSL-4 InferValue', () => {
  it('closed objects have exact keys; open objects add a JsonValue index signature', () => {
    type Closed = InferValue<{
      type: 'object'
      additionalProperties: false
      properties: { a: { type: 'string'; required: true }; b: { type: 'number' } }
    }>
    expectTypeOf<Closed>().toEqualTypeOf<{ a: string; b?: number }>()
    type Open = InferValue<{
      type: 'object'
      additionalProperties: true
      properties: { a: { type: 'string'; required: true } }
    }>
    expectTypeOf<Open>().toEqualTypeOf<{ a: string } & { [key: string]: JsonValue }>()
    expectTypeOf<Open['other']>().toEqualTypeOf<JsonValue>()
    type Empty = InferValue<{ type: 'object'; additionalProperties: false; properties: {} }>
    expectTypeOf<Empty>().toEqualTypeOf<{ [key: string]: never }>()
  })

  it('json infers JsonValue; arrays infer plain T[]', () => {
    expectTypeOf<InferValue<{ type: 'json' }>>().toEqualTypeOf<JsonValue>()
    expectTypeOf<InferValue<{ type: 'array' }>>().toEqualTypeOf<JsonValue[]>()
    expectTypeOf<InferValue<{ type: 'array'; items: { type: 'array'; items: { type: 'integer' } } }>>().toEqualTypeOf<
      number[][]
    >()
    expectTypeOf<InferValue<ValueSchemaSpec>>().toEqualTypeOf<JsonValue>()
  })

  it('oneOf infers a union, also nested in arrays', () => {
    const spec = {
      type: 'array',
      items: {
        oneOf: [
          { type: 'string', enum: ['a', 'b'] },
          { type: 'null' },
          {
            type: 'object',
            additionalProperties: false,
            properties: { n: { type: 'number', required: true } },
          },
        ],
      },
    } as const satisfies ValueSchemaSpec
    expectTypeOf<InferValue<typeof spec>>().toEqualTypeOf<('a' | 'b' | null | { n: number })[]>()
  })

  it('is exact through 16 container levels, then falls back to JsonValue without a depth error', () => {
    type Wrap<S> = { type: 'array'; items: S }
    type L1 = Wrap<{ type: 'string' }>
    type L4 = Wrap<Wrap<Wrap<L1>>>
    type L8 = Wrap<Wrap<Wrap<Wrap<L4>>>>
    type L16 = Wrap<Wrap<Wrap<Wrap<Wrap<Wrap<Wrap<Wrap<L8>>>>>>>>
    type L17 = Wrap<L16>
    type L20 = Wrap<Wrap<Wrap<L17>>>
    expectTypeOf<InferValue<L1>>().toEqualTypeOf<string[]>()
    expectTypeOf<InferValue<L16>>().toEqualTypeOf<string[][][][][][][][][][][][][][][][]>()
    expectTypeOf<InferValue<L17>>().toEqualTypeOf<JsonValue[][][][][][][][][][][][][][][][]>()
    expectTypeOf<InferValue<L20>>().toEqualTypeOf<JsonValue[][][][][][][][][][][][][][][][]>()

    type Obj<S> = { type: 'object'; additionalProperties: false; properties: { x: S & { required: true } } }
    type O4 = Obj<Obj<Obj<Obj<{ type: 'integer' }>>>>
    type O20 = Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<Obj<O4>>>>>>>>>>>>>>>>
    type Leaf16 = InferValue<O20>['x']['x']['x']['x']['x']['x']['x']['x']['x']['x']['x']['x']['x']['x']['x']['x']
    expectTypeOf<Leaf16>().toEqualTypeOf<JsonValue>()
    expectTypeOf<InferValue<O4>['x']['x']['x']['x']>().toEqualTypeOf<number>()
  })
})

describe('R-DSL-1 scalar enum/const must match the node type (type error)', () => {
  it('rejects a number enum on a string spec', () => {
    // @ts-expect-error: enum values must be strings on a string spec
    const bad: ValueSchemaSpec = { type: 'string', enum: [1, 2] }
    // @ts-expect-error: const must be a boolean on a boolean spec
    const badConst: ValueSchemaSpec = { type: 'boolean', const: 'yes' }
    // @ts-expect-error: object specs must declare additionalProperties
    const badObject: ValueSchemaSpec = { type: 'object', properties: {} }
    // @ts-expect-error: oneOf needs at least two branches
    const badOneOf: ValueSchemaSpec = { oneOf: [{ type: 'string' }] }
    expectTypeOf(bad).toEqualTypeOf<ValueSchemaSpec>()
    expectTypeOf(badConst).toEqualTypeOf<ValueSchemaSpec>()
    expectTypeOf(badObject).toEqualTypeOf<ValueSchemaSpec>()
    expectTypeOf(badOneOf).toEqualTypeOf<ValueSchemaSpec>()
  })

  it('forbids symbol keys in a parameter spec', () => {
    const key = Symbol('k')
    // @ts-expect-error: symbol keys are never parameter names
    const params: ParameterSchemaSpec = { [key]: { type: 'string' } }
    expectTypeOf(params).toEqualTypeOf<ParameterSchemaSpec>()
  })
})

describe('R-DSL-8 defineTool types execute/render/presentationMeta from the specs', () => {
  it('infers args and output value everywhere', () => {
    const tool = defineTool({
      name: 'search',
      description: 'Search.',
      parameters: {
        query: { type: 'string', required: true },
        limit: { type: 'integer' },
      },
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            hits: { type: 'array', items: { type: 'string' }, required: true },
            kind: { type: 'string', enum: ['full', 'partial'], required: true },
          },
        },
        render(args, value) {
          expectTypeOf(args).toEqualTypeOf<{ query: string; limit?: number }>()
          expectTypeOf(value).toEqualTypeOf<{ hits: string[]; kind: 'full' | 'partial' }>()
          return [{ type: 'text', text: value.hits.join(',') }]
        },
        presentationMeta(args, value) {
          expectTypeOf(args.query).toEqualTypeOf<string>()
          expectTypeOf(value.kind).toEqualTypeOf<'full' | 'partial'>()
          return { count: value.hits.length }
        },
      },
      async execute(args, exec) {
        expectTypeOf(args).toEqualTypeOf<{ query: string; limit?: number }>()
        expectTypeOf(exec).toEqualTypeOf<ToolRunContext>()
        return { hits: [args.query], kind: 'full' as const }
      },
      isConcurrencySafe(args) {
        expectTypeOf(args.limit).toEqualTypeOf<number | undefined>()
        return true
      },
      presentCall(args) {
        return { card: 'generic', title: args.query }
      },
    })
    expectTypeOf(tool).toMatchTypeOf<ToolDefinition>()
    expectTypeOf<ToolArgsOf<typeof tool>>().toEqualTypeOf<{ query: string; limit?: number }>()
    expectTypeOf<ToolValueOf<typeof tool>>().toEqualTypeOf<{ hits: string[]; kind: 'full' | 'partial' }>()
    const asDefinition: ToolDefinition = tool
    expectTypeOf(asDefinition.execute).parameter(0).toEqualTypeOf<unknown>()
  })

  it('rejects a body whose return type does not match the output schema', () => {
    defineTool({
      name: 'wrong',
      description: '',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      // @ts-expect-error: the body must return a string
      async execute() {
        return 42
      },
    })
  })

  it('rejects a number enum on a string parameter', () => {
    defineTool({
      name: 'wrong-enum',
      description: '',
      // @ts-expect-error: enum values must be strings on a string spec
      parameters: { mode: { type: 'string', enum: [1] } },
      output: { schema: { type: 'null' }, render: () => [] },
      execute: async () => null,
    })
  })
})

describe('needsApproval (issue 17)', () => {
  it('receives the inferred arguments', () => {
    defineTool({
      name: 'rm',
      description: 'remove',
      parameters: { path: { type: 'string', required: true }, force: { type: 'boolean' } },
      output: { schema: { type: 'null' }, render: () => [] },
      needsApproval: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ path: string; force?: boolean }>()
        return args.force === true ? 'forced delete' : false
      },
      execute: async () => null,
    })
  })
})
