import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isFrozenSnapshot } from '../../src/json/index.js'
import {
  assertSupportedJsonSchema,
  getArgsValidator,
  JsonSchemaError,
  type ParameterSchemaSpec,
  parameterSchemaSpecToJsonSchema,
  type ValueSchemaSpec,
  validateArgs,
  valueSchemaSpecToJsonSchema,
} from '../../src/schema/index.js'
import { objectArb, parameterSpecArb, valueArb, valueSpecArb, wrongValue } from './spec-arbitraries.js'

function specIssues(fn: () => unknown): string[] {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(JsonSchemaError)
    const e = error as JsonSchemaError
    expect(e.code).toBe('INVALID_JSON_SCHEMA')
    for (const issue of e.issues) expect(e.message).toContain(issue)
    return e.issues
  }
  throw new Error('expected a JsonSchemaError')
}

const bad = (spec: unknown) => spec as ValueSchemaSpec
const badParams = (spec: unknown) => spec as ParameterSchemaSpec

describe('R-DSL-1/3/5 valueSchemaSpecToJsonSchema compiles the DSL to the raw subset', () => {
  it('compiles every spec kind', () => {
    const spec = {
      type: 'object',
      title: 'Out',
      additionalProperties: false,
      properties: {
        s: { type: 'string', enum: ['a', 'b'], required: true, description: 'S' },
        n: { type: 'number' },
        i: { type: 'integer', const: 3 },
        b: { type: 'boolean' },
        z: { type: 'null' },
        list: { type: 'array', items: { type: 'string' } },
        anyList: { type: 'array' },
        open: { type: 'object', properties: {}, additionalProperties: true },
        blob: { type: 'json', description: 'anything' },
        either: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
      },
    } as const satisfies ValueSchemaSpec
    expect(valueSchemaSpecToJsonSchema(spec)).toEqual({
      type: 'object',
      title: 'Out',
      properties: {
        s: { type: 'string', enum: ['a', 'b'], description: 'S' },
        n: { type: 'number' },
        i: { type: 'integer', const: 3 },
        b: { type: 'boolean' },
        z: { type: 'null' },
        list: { type: 'array', items: { type: 'string' } },
        anyList: { type: 'array' },
        open: { type: 'object', properties: {}, additionalProperties: true },
        blob: { description: 'anything' },
        either: { oneOf: [{ type: 'string' }, { type: 'null' }] },
      },
      required: ['s', 'either'],
      additionalProperties: false,
    })
  })

  it('json compiles to an annotation-only node; scalar roots are fine', () => {
    expect(valueSchemaSpecToJsonSchema({ type: 'json' })).toEqual({})
    expect(valueSchemaSpecToJsonSchema({ type: 'string', const: 'x' })).toEqual({ type: 'string', const: 'x' })
    expect(valueSchemaSpecToJsonSchema({ type: 'array', items: { type: 'json' } })).toEqual({
      type: 'array',
      items: {},
    })
  })

  it('output is frozen lossless JSON, cached per spec object, and keeps declaration order', () => {
    const spec: ValueSchemaSpec = {
      type: 'object',
      additionalProperties: true,
      properties: { z: { type: 'string' }, a: { type: 'string' }, m: { type: 'string', required: true } },
    }
    const schema = valueSchemaSpecToJsonSchema(spec)
    expect(isFrozenSnapshot(schema)).toBe(true)
    expect(Object.isFrozen(schema.properties)).toBe(true)
    expect(Object.keys(schema.properties!)).toEqual(['z', 'a', 'm'])
    expect(valueSchemaSpecToJsonSchema(spec)).toBe(schema)
  })

  it('keeps __proto__/constructor property names as ordinary keys', () => {
    const spec = JSON.parse(
      '{"type":"object","additionalProperties":false,"properties":{"__proto__":{"type":"string","required":true},"constructor":{"type":"number"}}}',
    ) as ValueSchemaSpec
    const schema = valueSchemaSpecToJsonSchema(spec)
    expect(Object.keys(schema.properties!)).toEqual(['__proto__', 'constructor'])
    expect(Object.getPrototypeOf(schema.properties)).toBe(Object.prototype)
    expect(schema.required).toEqual(['__proto__'])
    expect(({} as Record<string, unknown>).type).toBeUndefined()
  })

  it('reports every offending path of a bad spec', () => {
    const issues = specIssues(() =>
      valueSchemaSpecToJsonSchema(
        bad({
          type: 'object',
          properties: {
            x: { type: 'string', enum: [3] },
            y: { type: 'strin' },
            z: { type: 'number', minimum: 1 },
            w: { type: 'object', properties: {} },
            u: { oneOf: [{ type: 'string' }] },
            v: { type: 'string', required: false },
            e: { type: 'integer', enum: [] },
            k: { type: 'boolean', const: 'yes' },
            t: { type: 'string', oneOf: [{ type: 'string' }, { type: 'null' }] },
            q: { description: 'no type' },
            arr: { type: 'array', items: { type: 'object', additionalProperties: 'no', properties: {} } },
          },
        }),
        'output',
      ),
    )
    expect(issues).toEqual([
      'output: an object spec must declare additionalProperties: true or false',
      'output.properties.x: enum value 3 does not match type string',
      'output.properties.y.type: "strin" is not one of string, number, integer, boolean, null, array, object, json',
      'output.properties.z: unsupported key "minimum"',
      'output.properties.w: an object spec must declare additionalProperties: true or false',
      'output.properties.u.oneOf: needs at least two branches, got 1',
      'output.properties.v.required: must be true or omitted, got false',
      'output.properties.e: enum must not be empty',
      'output.properties.k: const value "yes" does not match type boolean',
      'output.properties.t: a oneOf spec must not also declare "type"',
      'output.properties.q: missing "type" (one of string, number, integer, boolean, null, array, object, json) or "oneOf"',
      'output.properties.arr.items.additionalProperties: must be true or false',
    ])
  })

  it('rejects required on a non-property node and missing properties', () => {
    expect(specIssues(() => valueSchemaSpecToJsonSchema(bad({ type: 'string', required: true })))).toEqual([
      'schema: unsupported key "required"',
    ])
    expect(specIssues(() => valueSchemaSpecToJsonSchema(bad({ type: 'object', additionalProperties: true })))).toEqual([
      'schema: an object spec must declare "properties"',
    ])
  })

  it('R-DSL-6 reads only own enumerable string keys and dense plain arrays', () => {
    let calls = 0
    const getter = {
      type: 'object',
      additionalProperties: true,
      properties: {
        get a() {
          calls++
          return { type: 'string' }
        },
      },
    }
    expect(specIssues(() => valueSchemaSpecToJsonSchema(bad(getter)))[0]).toMatch(
      /^schema\.properties\.a: is an accessor/,
    )
    expect(calls).toBe(0)
    const symbolKey = { type: 'object', additionalProperties: true, properties: { [Symbol('s')]: { type: 'string' } } }
    expect(specIssues(() => valueSchemaSpecToJsonSchema(bad(symbolKey)))[0]).toMatch(/symbol key/)
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const sparse = { oneOf: [{ type: 'string' }, , { type: 'null' }] }
    expect(specIssues(() => valueSchemaSpecToJsonSchema(bad(sparse)))[0]).toBe(
      'schema.oneOf[1]: is a hole in a sparse array, which is not JSON',
    )
    const inherited = Object.create({ type: 'string' }) as object
    expect(specIssues(() => valueSchemaSpecToJsonSchema(bad(inherited)))[0]).toMatch(/prototype is neither/)
    const hidden = Object.defineProperty({ type: 'string' }, 'enum', { value: [1], enumerable: false })
    expect(specIssues(() => valueSchemaSpecToJsonSchema(bad(hidden)))[0]).toMatch(/non-enumerable/)
  })

  it('compiles a 100,000-deep spec with an explicit stack', () => {
    let spec: ValueSchemaSpec = { type: 'integer' }
    for (let i = 0; i < 100_000; i++) spec = { type: 'array', items: spec }
    const schema = valueSchemaSpecToJsonSchema(spec)
    let depth = 0
    let node: { items?: unknown } = schema
    while (node.items !== undefined) {
      node = node.items as { items?: unknown }
      depth++
    }
    expect(depth).toBe(100_000)
  })
})

describe('R-DSL-2 parameterSchemaSpecToJsonSchema: the implicit open object root', () => {
  it('compiles to an object schema with required only when non-empty', () => {
    expect(parameterSchemaSpecToJsonSchema({})).toEqual({ type: 'object', properties: {} })
    expect(
      parameterSchemaSpecToJsonSchema({ path: { type: 'string', required: true }, limit: { type: 'integer' } }),
    ).toEqual({
      type: 'object',
      properties: { path: { type: 'string' }, limit: { type: 'integer' } },
      required: ['path'],
    })
  })

  it('is open: undeclared arguments are accepted', () => {
    expect(validateArgs({ a: { type: 'string' } }, { a: 'x', other: [1] })).toEqual([])
  })

  it('reports every offending path, rooted at parameters', () => {
    expect(
      specIssues(() =>
        parameterSchemaSpecToJsonSchema(
          badParams({
            items: { type: 'object', additionalProperties: false, properties: { x: { type: 'string', enum: [3] } } },
            count: { type: 'integer', const: 1.5 },
          }),
        ),
      ),
    ).toEqual([
      'parameters.items.properties.x: enum value 3 does not match type string',
      'parameters.count: const value 1.5 does not match type integer',
    ])
  })

  it('rejects symbol keys, non-object roots and non-object property specs', () => {
    expect(
      specIssues(() => parameterSchemaSpecToJsonSchema(badParams({ [Symbol('x')]: { type: 'string' } })))[0],
    ).toMatch(/^parameters has a symbol key|^parameters: has a symbol key/)
    expect(specIssues(() => parameterSchemaSpecToJsonSchema(badParams([])))[0]).toMatch(
      /^parameters: expected an object/,
    )
    expect(specIssues(() => parameterSchemaSpecToJsonSchema(badParams({ a: 'string' })))).toEqual([
      'parameters.a: expected a schema spec object, got string',
    ])
  })

  it('caches per spec object', () => {
    const spec: ParameterSchemaSpec = { a: { type: 'string' } }
    expect(parameterSchemaSpecToJsonSchema(spec)).toBe(parameterSchemaSpecToJsonSchema(spec))
    expect(getArgsValidator(spec)).toBe(getArgsValidator(spec))
  })
})

describe('R-DSL-7 validateArgs', () => {
  const params = {
    path: { type: 'string', required: true },
    mode: { type: 'string', enum: ['r', 'w'] },
    lines: { type: 'array', items: { type: 'integer' } },
    opts: {
      type: 'object',
      additionalProperties: false,
      properties: { deep: { type: 'boolean', required: true } },
    },
  } as const satisfies ParameterSchemaSpec

  it('returns [] for valid args and every path-qualified violation otherwise', () => {
    expect(validateArgs(params, { path: '/a', lines: [1, 2], opts: { deep: true } })).toEqual([])
    expect(validateArgs(params, { path: 3, mode: 'x', lines: [1, 2.5], opts: { other: 1 } }).sort()).toEqual(
      [
        'args.path: expected string, got number',
        'args.mode: expected one of "r", "w"; got "x"',
        'args.lines[1]: expected integer, got 2.5',
        'args.opts.deep: required property is missing',
        'args.opts.other: property is not allowed (additionalProperties: false)',
      ].sort(),
    )
    expect(validateArgs(params, null)).toEqual(['args: expected object, got null'])
    expect(validateArgs(params, {})).toEqual(['args.path: required property is missing'])
  })
})

describe('R-DSL-5/7 properties (fast-check)', () => {
  it('compiled value and parameter specs always pass assertSupportedJsonSchema', () => {
    fc.assert(
      fc.property(valueSpecArb(3), (spec) => {
        assertSupportedJsonSchema(valueSchemaSpecToJsonSchema(spec))
      }),
      { numRuns: 300 },
    )
    fc.assert(
      fc.property(parameterSpecArb, (spec) => {
        const schema = parameterSchemaSpecToJsonSchema(spec)
        assertSupportedJsonSchema(schema)
        expect(schema.type).toBe('object')
      }),
      { numRuns: 300 },
    )
  })

  it('values generated from a spec pass; mutated ones fail', () => {
    const withArgs = parameterSpecArb.chain((spec) => fc.tuple(fc.constant(spec), objectArb(spec, true)))
    fc.assert(
      fc.property(withArgs, ([spec, args]) => {
        expect(validateArgs(spec, args)).toEqual([])
        for (const key of Object.keys(spec)) {
          if (spec[key].required === true) {
            const missing = { ...args }
            Reflect.deleteProperty(missing, key)
            const violations = validateArgs(spec, missing)
            expect(violations.length).toBeGreaterThan(0)
            expect(getArgsValidator(spec).isValid(missing)).toBe(false)
          }
          const wrong = wrongValue(spec[key])
          const mutated: Record<string, unknown> = { ...args }
          Object.defineProperty(mutated, key, { value: wrong, enumerable: true, writable: true, configurable: true })
          expect(validateArgs(spec, mutated).length).toBeGreaterThan(0)
          expect(getArgsValidator(spec).isValid(mutated)).toBe(false)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('value specs accept their generated values', () => {
    const withValue = valueSpecArb(3).chain((spec) => fc.tuple(fc.constant(spec), valueArb(spec)))
    fc.assert(
      fc.property(withValue, ([spec, value]) => {
        const schema = valueSchemaSpecToJsonSchema(spec)
        expect(validateArgs({ v: { ...spec, required: true } } as ParameterSchemaSpec, { v: value })).toEqual([])
        expect(schema).toBeDefined()
      }),
      { numRuns: 300 },
    )
  })
})
