// Standard Schema for `parameters` and `output.schema` (issue 17): a schema of any library that
// implements Standard JSON Schema is converted once into toolgate's enforced subset, with a
// path-qualified error for whatever the subset cannot express; validation stays toolgate's own.
import { toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  createToolRuntime,
  defineTool,
  JsonSchemaError,
  type ToolDefinition,
  type ToolExecutionResult,
} from '../../src/index.js'

const signal = () => new AbortController().signal
const text = (value: unknown) => [{ type: 'text' as const, text: JSON.stringify(value) }]

async function run(definition: ToolDefinition, args: unknown): Promise<ToolExecutionResult> {
  const { tools, dispose } = await createToolRuntime()
  try {
    tools.register(definition)
    return await tools.execute({ callId: 'c', name: definition.name, arguments: args, signal: signal() })
  } finally {
    await dispose()
  }
}

function refused(build: () => unknown): JsonSchemaError {
  try {
    build()
  } catch (error) {
    expect(error).toBeInstanceOf(JsonSchemaError)
    return error as JsonSchemaError
  }
  throw new Error('expected defineTool to refuse the schema')
}

describe('zod 4', () => {
  const parameters = z.object({
    path: z.string().describe('file to read'),
    limit: z.int().optional(),
    encoding: z.enum(['utf8', 'base64']),
    note: z.string().nullable(),
    mode: z.union([z.literal('fast'), z.literal('safe')]).default('safe'),
  })
  const output = z.object({ bytes: z.number(), text: z.string() })
  const read = defineTool({
    name: 'read',
    description: 'Read a file.',
    parameters,
    output: { schema: output, render: (_args, value) => text(value) },
    execute: async (args) => ({ bytes: args.path.length, text: `${args.encoding}:${args.mode}:${args.note ?? '-'}` }),
  })

  it('converts to the enforced subset the model sees (the output side: a defaulted field is required)', () => {
    expect(read.parameters).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'file to read' },
        limit: { type: 'integer' },
        encoding: { type: 'string', enum: ['utf8', 'base64'] },
        note: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        mode: {
          default: 'safe',
          oneOf: [
            { type: 'string', const: 'fast' },
            { type: 'string', const: 'safe' },
          ],
        },
      },
      required: ['path', 'encoding', 'note', 'mode'],
      additionalProperties: false,
    })
    expect(read.output.schema).toEqual({
      type: 'object',
      properties: { bytes: { type: 'number' }, text: { type: 'string' } },
      required: ['bytes', 'text'],
      additionalProperties: false,
    })
    expect(Object.isFrozen(read.parameters)).toBe(true)
  })

  it('runs valid calls and refuses invalid ones with toolgate’s own path-qualified violations', async () => {
    const ok = await run(read, { path: 'a.txt', encoding: 'utf8', note: null, mode: 'fast' })
    expect(ok).toMatchObject({ isError: false, value: { bytes: 5, text: 'utf8:fast:-' } })
    const bad = await run(read, { path: 1, encoding: 'latin1', note: null, mode: 'safe', extra: true })
    expect(bad.isError).toBe(true)
    expect(bad.isError && bad.error.info?.code).toBe('INVALID_ARGS')
    const message = bad.isError ? bad.error.message : ''
    expect(message).toMatch(/args\.path: expected string/)
    expect(message).toMatch(/args\.encoding/)
    expect(message).toMatch(/args\.extra/)
  })

  it('checks the body’s value against the output schema', async () => {
    const liar = defineTool({
      name: 'liar',
      description: 'Returns the wrong shape.',
      parameters: z.object({}),
      output: { schema: z.object({ n: z.number() }), render: (_a, value) => text(value) },
      execute: async () => JSON.parse('{"n":"one"}') as { n: number },
    })
    const result = await run(liar, {})
    expect(result.isError && result.error.info?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(result.isError && result.error.message).toMatch(/n: expected number/)
  })

  it('names the path of every part the subset cannot express', () => {
    const error = refused(() =>
      defineTool({
        name: 'rich',
        description: 'Uses constraints the subset lacks.',
        parameters: z.object({
          name: z.string().min(2),
          tags: z.record(z.string(), z.number()),
          pair: z.tuple([z.string()]),
          either: z.union([z.string(), z.literal('a')]),
        }),
        output: { schema: z.string(), render: (_a, value) => text(value) },
        execute: async ({ name }) => name,
      }),
    )
    expect(error.message).toMatch(/^Unsupported zod schema/)
    expect(error.issues).toEqual(
      expect.arrayContaining([
        'parameters.properties.name: unsupported keyword "minLength"',
        'parameters.properties.tags: unsupported keyword "propertyNames"',
        'parameters.properties.tags.additionalProperties: must be a boolean (schema-valued additionalProperties is not supported)',
        'parameters.properties.pair: unsupported keyword "prefixItems"',
        expect.stringMatching(/^parameters\.properties\.either\.anyOf: branches 0 and 1 can match the same value/),
      ]),
    )
  })

  it('reports what zod itself cannot convert, recursion, and a non-object parameter root', () => {
    const transform = refused(() =>
      defineTool({
        name: 't',
        description: '',
        parameters: z.object({ n: z.string().transform((s) => s.length) }),
        output: { schema: z.number(), render: (_a, value) => text(value) },
        execute: async ({ n }) => n,
      }),
    )
    expect(transform.issues).toEqual([
      'parameters: zod cannot express this schema as JSON Schema: Transforms cannot be represented in JSON Schema',
    ])
    const Tree = z.object({
      name: z.string(),
      get children() {
        return z.array(Tree)
      },
    })
    const recursive = refused(() =>
      defineTool({
        name: 'tree',
        description: '',
        parameters: z.object({ tree: Tree }),
        output: { schema: Tree, render: (_a, value) => text(value) },
        execute: async ({ tree }) => tree,
      }),
    )
    expect(recursive.issues[0]).toMatch(/^parameters\.properties\.tree\.properties\.children\.items: recursive schema/)
    const scalar = refused(() =>
      defineTool({
        name: 's',
        description: '',
        parameters: z.string(),
        output: { schema: z.string(), render: (_a, value) => text(value) },
        execute: async (s) => s,
      }),
    )
    expect(scalar.issues).toEqual(['parameters: tool parameters must be an object schema, got type "string"'])
    const badOutput = refused(() =>
      defineTool({
        name: 'o',
        description: '',
        parameters: z.object({}),
        output: { schema: z.string().max(3), render: (_a, value) => text(value) },
        execute: async () => 'abc',
      }),
    )
    expect(badOutput.issues).toEqual(['output.schema: unsupported keyword "maxLength"'])
  })

  it('a discriminated union is an exact oneOf', () => {
    const shape = defineTool({
      name: 'shape',
      description: '',
      parameters: z.object({
        shape: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('circle'), r: z.number() }),
          z.object({ kind: z.literal('square'), side: z.number() }),
        ]),
      }),
      output: { schema: z.number(), render: (_a, value) => text(value) },
      execute: async ({ shape }) => (shape.kind === 'circle' ? shape.r : shape.side),
    })
    expect(shape.parameters.properties?.shape).toMatchObject({ oneOf: [{ type: 'object' }, { type: 'object' }] })
  })
})

describe('valibot', () => {
  it('works through toStandardJsonSchema; a bare valibot schema is refused with the way out', async () => {
    const schema = v.object({ n: v.pipe(v.number(), v.integer()), label: v.optional(v.string()) })
    const double = defineTool({
      name: 'double',
      description: 'Double n.',
      parameters: toStandardJsonSchema(schema),
      output: { schema: toStandardJsonSchema(v.number()), render: (_a, value) => text(value) },
      execute: async ({ n }) => n * 2,
    })
    expect(double.parameters).toEqual({
      type: 'object',
      properties: { n: { type: 'integer' }, label: { type: 'string' } },
      required: ['n'],
    })
    expect(await run(double, { n: 21 })).toMatchObject({ isError: false, value: 42 })
    expect((await run(double, { n: 1.5 })).isError).toBe(true)
    const bare = refused(() =>
      defineTool({
        name: 'bare',
        description: '',
        parameters: schema as never,
        output: { schema: { type: 'number' }, render: (_a, value) => text(value) },
        execute: async () => 1,
      }),
    )
    expect(bare.issues[0]).toMatch(
      /^parameters: this valibot schema implements Standard Schema but not Standard JSON Schema .*toStandardJsonSchema\(\)/,
    )
  })
})

describe('arktype', () => {
  it('converts nullable fields and discriminated unions; optional keys stay optional', async () => {
    const move = defineTool({
      name: 'move',
      description: 'Move somewhere.',
      parameters: type({
        to: type({ kind: "'cell'", index: 'number.integer' }).or({ kind: "'home'" }),
        'speed?': 'number',
        note: 'string | null',
      }),
      output: { schema: type('string'), render: (_a, value) => text(value) },
      execute: async (args) => (args.to.kind === 'cell' ? `cell ${args.to.index}` : 'home'),
    })
    expect(move.parameters.required).toEqual(['note', 'to'])
    expect(move.parameters.properties?.note).toEqual({ oneOf: [{ type: 'string' }, { type: 'null' }] })
    expect(await run(move, { to: { kind: 'cell', index: 3 }, note: null })).toMatchObject({ value: 'cell 3' })
    const wrong = await run(move, { to: { kind: 'cell' }, note: 'x' })
    expect(wrong.isError && wrong.error.message).toMatch(/args\.to/)
  })
})

describe('any Standard JSON Schema implementation', () => {
  it('toolgate validates with its own validator and never calls the library’s validate', async () => {
    let validated = 0
    const handmade = {
      '~standard': {
        version: 1 as const,
        vendor: 'handmade',
        validate: () => {
          validated++
          return { issues: [{ message: 'never valid' }] }
        },
        jsonSchema: {
          input: () => ({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
          output: () => ({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
        },
        types: undefined as unknown as { input: { q: string }; output: { q: string } },
      },
    }
    const echo = defineTool({
      name: 'echo',
      description: '',
      parameters: handmade,
      output: { schema: { type: 'string' }, render: (_a, value) => text(value) },
      execute: async ({ q }) => q,
    })
    expect(await run(echo, { q: 'hi' })).toMatchObject({ isError: false, value: 'hi' })
    expect((await run(echo, { q: 1 })).isError).toBe(true)
    expect(validated).toBe(0)
  })

  it('a converter that returns something that is not lossless JSON is refused with its path', () => {
    const broken = {
      '~standard': {
        version: 1 as const,
        vendor: 'broken',
        validate: () => ({ value: {} }),
        jsonSchema: {
          input: () => ({}),
          output: () => ({ type: 'object', properties: { n: { type: 'number', default: Number.NaN } } }),
        },
      },
    }
    const error = refused(() =>
      defineTool({
        name: 'broken',
        description: '',
        parameters: broken,
        output: { schema: { type: 'json' }, render: (_a, value) => text(value) },
        execute: async () => null,
      }),
    )
    expect(error.issues[0]).toMatch(/^parameters\.properties\.n\.default: /)
  })
})
