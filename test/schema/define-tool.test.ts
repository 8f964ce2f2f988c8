import { describe, expect, it } from 'vitest'
import type { ToolRunContext } from '../../src/contract/execution.js'
import { isFrozenSnapshot, snapshotJsonValue } from '../../src/json/index.js'
import {
  assertSupportedJsonSchema,
  defineTool,
  getJsonSchemaValidator,
  JsonSchemaError,
  ToolArgsError,
  ToolOutputError,
} from '../../src/schema/index.js'

const exec = {} as ToolRunContext

function makeTool(log: string[] = []) {
  return defineTool({
    name: 'read_lines',
    description: 'Read lines of a file.',
    parameters: {
      path: { type: 'string', required: true },
      limit: { type: 'integer' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { lines: { type: 'array', items: { type: 'string' }, required: true } },
      },
      render: (args, value) => [{ type: 'text', text: `${args.path}: ${value.lines.join('\n')}` }],
      presentationMeta: (args, value) => ({ path: args.path, count: value.lines.length }),
    },
    async execute(args) {
      log.push(`body ${args.path}`)
      return { lines: Array.from({ length: args.limit ?? 1 }, (_, i) => `line ${i}`) }
    },
    isConcurrencySafe: (args) => args.path.startsWith('/safe'),
    presentCall: (args) => ({ card: 'generic', title: `Read ${args.path}` }),
    presentResult: (args, result) => ({ card: 'generic', title: `${args.path} ${result.isError ? 'failed' : 'ok'}` }),
    finalizeContent: () => undefined,
    timeoutMs: 5000,
  })
}

describe('R-DSL-8 / R-DEF defineTool returns a ToolDefinition', () => {
  it('carries compiled, frozen raw schemas and the plain fields', () => {
    const tool = makeTool()
    expect(tool.name).toBe('read_lines')
    expect(tool.description).toBe('Read lines of a file.')
    expect(tool.parameters).toEqual({
      type: 'object',
      properties: { path: { type: 'string' }, limit: { type: 'integer' } },
      required: ['path'],
    })
    expect(tool.output.schema).toEqual({
      type: 'object',
      properties: { lines: { type: 'array', items: { type: 'string' } } },
      required: ['lines'],
      additionalProperties: false,
    })
    expect(isFrozenSnapshot(tool.parameters)).toBe(true)
    expect(isFrozenSnapshot(tool.output.schema)).toBe(true)
    expect(() => assertSupportedJsonSchema(tool.output.schema)).not.toThrow()
    expect(tool.timeoutMs).toBe(5000)
    expect(Object.isFrozen(tool)).toBe(true)
    expect(Object.isFrozen(tool.output)).toBe(true)
    // Only declared optional members exist.
    const minimal = defineTool({
      name: 'n',
      description: '',
      parameters: {},
      output: { schema: { type: 'null' }, render: () => [] },
      execute: async () => null,
    })
    for (const key of ['finalizeContent', 'timeoutMs', 'isConcurrencySafe', 'presentCall', 'presentResult']) {
      expect(key in minimal).toBe(false)
    }
    expect('presentationMeta' in minimal.output).toBe(false)
  })

  it('execute runs the body with valid args and returns its value', async () => {
    const log: string[] = []
    const tool = makeTool(log)
    const args = snapshotJsonValue({ path: '/a', limit: 2 })
    await expect(tool.execute(args, exec)).resolves.toEqual({ lines: ['line 0', 'line 1'] })
    expect(log).toEqual(['body /a'])
  })

  it('R-DSL-7 execute rejects with ToolArgsError before the body runs', async () => {
    const log: string[] = []
    const tool = makeTool(log)
    const pending = tool.execute({ path: 1, limit: 1.5 }, exec)
    expect(log).toEqual([])
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ToolArgsError)
    const argsError = error as ToolArgsError
    expect(argsError.name).toBe('ToolArgsError')
    expect(argsError.code).toBe('INVALID_ARGS')
    expect(argsError.violations).toEqual([
      'args.path: expected string, got number',
      'args.limit: expected integer, got 1.5',
    ])
    expect(argsError.message).toContain('read_lines')
    expect(argsError.message).toContain('args.limit: expected integer, got 1.5')
    expect(log).toEqual([])
    await expect(tool.execute(undefined, exec)).rejects.toThrow(ToolArgsError)
    await expect(tool.execute({ path: '/x', limit: undefined }, exec)).rejects.toThrow(/args\.limit: is undefined/)
  })

  it('a body that throws synchronously still yields a rejected promise', async () => {
    const tool = defineTool({
      name: 'boom',
      description: '',
      parameters: {},
      output: { schema: { type: 'json' }, render: () => [] },
      execute: (() => {
        throw new Error('sync boom')
      }) as () => Promise<null>,
    })
    await expect(tool.execute({}, exec)).rejects.toThrow('sync boom')
  })

  it('render and presentationMeta pass through', () => {
    const tool = makeTool()
    expect(tool.output.render({ path: '/p' }, { lines: ['a', 'b'] })).toEqual([{ type: 'text', text: '/p: a\nb' }])
    expect(tool.output.presentationMeta?.({ path: '/p' }, { lines: ['a'] })).toEqual({ path: '/p', count: 1 })
  })

  it('isConcurrencySafe/presentCall/presentResult validate softly and never throw', () => {
    const tool = makeTool()
    expect(tool.isConcurrencySafe?.({ path: '/safe/x' })).toBe(true)
    expect(tool.isConcurrencySafe?.({ path: '/other' })).toBe(false)
    expect(tool.isConcurrencySafe?.({ path: 3 })).toBe(false)
    expect(tool.presentCall?.({ path: '/a' })).toEqual({ card: 'generic', title: 'Read /a' })
    expect(tool.presentCall?.({})).toBeUndefined()
    const result = { isError: false, content: [] }
    expect(tool.presentResult?.({ path: '/a' }, result)).toEqual({ card: 'generic', title: '/a ok' })
    expect(tool.presentResult?.({ limit: 'x' }, result)).toBeUndefined()

    const throwing = defineTool({
      name: 't',
      description: '',
      parameters: { a: { type: 'string' } },
      output: { schema: { type: 'null' }, render: () => [] },
      execute: async () => null,
      isConcurrencySafe: () => {
        throw new Error('x')
      },
      presentCall: () => {
        throw new Error('x')
      },
      presentResult: () => {
        throw new Error('x')
      },
    })
    expect(throwing.isConcurrencySafe?.({})).toBe(false)
    expect(throwing.presentCall?.({})).toBeUndefined()
    expect(throwing.presentResult?.({}, result)).toBeUndefined()
    const truthy = defineTool({
      name: 't2',
      description: '',
      parameters: {},
      output: { schema: { type: 'null' }, render: () => [] },
      execute: async () => null,
      isConcurrencySafe: () => 'yes' as unknown as boolean,
    })
    expect(truthy.isConcurrencySafe?.({})).toBe(false)
  })

  it('the compiled output validator is what the pipeline uses for ToolOutputError', () => {
    const tool = makeTool()
    const validator = getJsonSchemaValidator(tool.output.schema)
    expect(validator.isValid({ lines: ['x'] })).toBe(true)
    const violations = validator.violations({ lines: [1] })
    expect(violations).toEqual(['value.lines[0]: expected string, got number'])
    const error = new ToolOutputError(violations, tool.name)
    expect(error.name).toBe('ToolOutputError')
    expect(error.code).toBe('INVALID_TOOL_OUTPUT')
    expect(error.violations).toEqual(violations)
    expect(error.message).toContain('value.lines[0]: expected string, got number')
  })

  it('captures callbacks at definition time', async () => {
    const spec = {
      name: 'cap',
      description: '',
      parameters: {},
      output: { schema: { type: 'string' } as const, render: () => [{ type: 'text' as const, text: 'first' }] },
      execute: async () => 'one',
    }
    const tool = defineTool(spec)
    spec.execute = async () => 'two'
    spec.output.render = () => [{ type: 'text', text: 'second' }]
    await expect(tool.execute({}, exec)).resolves.toBe('one')
    expect(tool.output.render({}, 'one')).toEqual([{ type: 'text', text: 'first' }])
  })

  it('rejects invalid definitions and invalid specs with every issue', () => {
    expect(() =>
      defineTool({
        name: '',
        description: 'd',
        parameters: {},
        output: { schema: { type: 'null' }, render: 1 as never },
        execute: undefined as never,
        timeoutMs: -1,
      }),
    ).toThrow(
      /name: must be a non-empty string[\s\S]*output\.render: must be a function[\s\S]*execute: must be a function[\s\S]*timeoutMs/,
    )
    try {
      defineTool({
        name: 'bad',
        description: '',
        parameters: { a: { type: 'string', enum: [1] as never } },
        output: { schema: { type: 'object', properties: {} } as never, render: () => [] },
        execute: (async () => ({})) as never,
      })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(JsonSchemaError)
      expect((error as JsonSchemaError).issues).toEqual(['parameters.a: enum value 1 does not match type string'])
    }
    try {
      defineTool({
        name: 'bad',
        description: '',
        parameters: {},
        output: { schema: { type: 'object', properties: {} } as never, render: () => [] },
        execute: (async () => ({})) as never,
      })
      expect.unreachable()
    } catch (error) {
      expect((error as JsonSchemaError).issues).toEqual([
        'output.schema: an object spec must declare additionalProperties: true or false',
      ])
    }
  })
})
