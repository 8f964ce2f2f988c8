import { describe, expect, it } from 'vitest'
import { snapshotJsonValue } from '../../src/json/index.js'
import {
  assertObjectJsonSchema,
  assertSupportedJsonSchema,
  getJsonSchemaValidator,
  JsonSchemaError,
  type JsonSchemaNode,
  validateJsonSchemaValue,
} from '../../src/schema/index.js'

function issuesOf(schema: unknown, assert: (schema: unknown) => void = assertSupportedJsonSchema): string[] {
  try {
    assert(schema)
  } catch (error) {
    expect(error).toBeInstanceOf(JsonSchemaError)
    const e = error as JsonSchemaError
    expect(e.name).toBe('JsonSchemaError')
    expect(e.code).toBe('INVALID_JSON_SCHEMA')
    for (const issue of e.issues) expect(e.message).toContain(issue)
    return e.issues
  }
  throw new Error('expected a JsonSchemaError')
}

function nested(depth: number, leaf: JsonSchemaNode): JsonSchemaNode {
  let schema = leaf
  for (let i = 0; i < depth; i++) schema = { type: 'array', items: schema }
  return schema
}

function nestedValue(depth: number, leaf: unknown): unknown {
  let value = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe('R-JSCHEMA-1/2 assertSupportedJsonSchema accepts the subset', () => {
  it('accepts every keyword of the subset and any root type', () => {
    const schema = {
      type: 'object',
      title: 'T',
      description: 'D',
      default: { a: 'x' },
      examples: [{ a: 'y' }],
      properties: {
        a: { type: 'string', enum: ['x', 'y'] },
        n: { type: 'integer', const: 3 },
        list: { type: 'array', items: { oneOf: [{ type: 'number' }, { type: 'null' }] } },
        any: {},
      },
      required: ['a'],
      additionalProperties: false,
    }
    expect(() => assertSupportedJsonSchema(schema)).not.toThrow()
    for (const root of [{}, { type: 'string' }, { type: 'array' }, { type: 'null' }, { description: 'only' }]) {
      expect(() => assertSupportedJsonSchema(root)).not.toThrow()
    }
  })

  it('allows type together with oneOf (both must hold)', () => {
    const schema: JsonSchemaNode = { type: 'number', oneOf: [{ type: 'integer' }, { enum: [0.5] }] }
    expect(() => assertSupportedJsonSchema(schema)).not.toThrow()
    expect(validateJsonSchemaValue(schema, 2)).toEqual([])
    expect(validateJsonSchemaValue(schema, 0.5)).toEqual([])
    expect(validateJsonSchemaValue(schema, 'x')).toEqual(['value: expected number, got string'])
  })
})

describe('R-JSCHEMA-2 assertSupportedJsonSchema rejects, listing every offending path', () => {
  it('reports every issue of a bad schema at once', () => {
    const issues = issuesOf({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, pattern: '^a' },
        items: { type: 'array', items: { type: 'array', items: { oneOf: [{ type: 'string' }, { $ref: '#/x' }] } } },
        tag: { properties: { x: {} } },
      },
      required: ['name', 'missing'],
      anyOf: [],
    })
    expect(issues).toEqual(
      expect.arrayContaining([
        'schema: unsupported keyword "anyOf"',
        'schema.required[1]: required property "missing" is not declared in properties',
        'schema.properties.name: unsupported keyword "minLength"',
        'schema.properties.name: unsupported keyword "pattern"',
        'schema.properties.items.items.items.oneOf[1]: unsupported keyword "$ref"',
        'schema.properties.tag.properties: requires type "object"',
      ]),
    )
    expect(issues).toHaveLength(6)
  })

  const cases: [string, unknown, string][] = [
    ['allOf', { allOf: [{}] }, 'schema: unsupported keyword "allOf"'],
    ['format', { type: 'string', format: 'date' }, 'schema: unsupported keyword "format"'],
    ['unknown type', { type: 'text' }, 'schema.type: "text" is not one of'],
    ['type array', { type: ['string', 'null'] }, 'schema.type: type arrays are not supported (use oneOf)'],
    ['properties without type', { properties: {} }, 'schema.properties: requires type "object"'],
    ['required without type', { required: [] }, 'schema.required: requires type "object"'],
    [
      'additionalProperties without type',
      { additionalProperties: false },
      'schema.additionalProperties: requires type "object"',
    ],
    [
      'schema-valued additionalProperties',
      { type: 'object', additionalProperties: {} },
      'schema.additionalProperties: must be a boolean',
    ],
    ['items on a non-array', { type: 'object', items: {} }, 'schema.items: requires type "array"'],
    ['tuple items', { type: 'array', items: [{}] }, 'schema.items: tuple items are not supported'],
    ['required not declared', { type: 'object', required: ['x'] }, 'schema.required[0]: required property "x"'],
    ['duplicate required', { type: 'object', properties: { x: {} }, required: ['x', 'x'] }, 'duplicate'],
    ['enum of wrong type', { type: 'string', enum: ['a', 3] }, 'schema: enum value 3 does not match type string'],
    ['integer enum with a fraction', { type: 'integer', enum: [1.5] }, 'enum value 1.5 does not match type integer'],
    ['non-scalar enum', { enum: [{ a: 1 }] }, 'is not a string, number, boolean or null'],
    ['empty enum', { type: 'string', enum: [] }, 'schema: enum must not be empty'],
    ['enum on object', { type: 'object', enum: [null] }, 'enum is only supported on scalar types, not "object"'],
    ['const on array', { type: 'array', const: 1 }, 'const is only supported on scalar types, not "array"'],
    [
      'const of wrong type',
      { type: 'boolean', const: 'true' },
      'schema: const value "true" does not match type boolean',
    ],
    ['oneOf with one branch', { oneOf: [{}] }, 'schema.oneOf: needs at least two branches, got 1'],
    ['oneOf not an array', { oneOf: {} }, 'schema.oneOf: must be an array'],
    ['description not a string', { description: 1 }, 'schema.description: must be a string'],
    [
      'boolean schema',
      { type: 'object', properties: { a: true } },
      'schema.properties.a: expected a schema object, got boolean',
    ],
    ['non-JSON annotation', { default: Number.NaN }, 'schema.default: is NaN'],
    ['-0 annotation', { examples: [-0] }, 'schema.examples[0]: is -0'],
    ['undefined annotation', { title: 'x', default: undefined }, 'schema.default: is undefined'],
    ['non-object root', 'string', 'schema: expected a schema object, got string'],
  ]
  for (const [label, schema, expected] of cases) {
    it(`rejects ${label}`, () => {
      const issues = issuesOf(schema)
      expect(issues.some((issue) => issue.includes(expected))).toBe(true)
    })
  }

  it('odd property names render bracket-quoted', () => {
    const issues = issuesOf({ type: 'object', properties: { 'odd key': { maximum: 1 } } })
    expect(issues).toEqual(['schema.properties["odd key"]: unsupported keyword "maximum"'])
  })

  it('a getter in a schema is rejected without being invoked', () => {
    let calls = 0
    const schema = {
      get type() {
        calls++
        return 'string'
      },
    }
    expect(issuesOf(schema)).toEqual(['schema.type: is an accessor property, which is not JSON (it was not invoked)'])
    expect(calls).toBe(0)
  })
})

describe('R-JSCHEMA-3 an annotation-only node means any lossless JSON value', () => {
  it('accepts any JSON and rejects non-JSON', () => {
    const schema = { description: 'anything' }
    for (const value of [null, 1, 'x', [1, [2]], { a: { b: null } }])
      expect(validateJsonSchemaValue(schema, value)).toEqual([])
    expect(validateJsonSchemaValue(schema, undefined)).toEqual(['value: is undefined, which is not JSON'])
    expect(validateJsonSchemaValue(schema, { a: [1, () => 1] })).toEqual([
      'value.a[1]: is a function, which is not JSON',
    ])
    expect(validateJsonSchemaValue({}, Number.POSITIVE_INFINITY)).toEqual(['value: is Infinity, which is not JSON'])
    expect(validateJsonSchemaValue({}, new Date(0))).toHaveLength(1)
  })
})

describe('R-JSCHEMA-4 validateJsonSchemaValue', () => {
  const schema: JsonSchemaNode = {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        items: {
          type: 'object',
          properties: { when: { type: 'string' }, count: { type: 'integer' } },
          required: ['when'],
          additionalProperties: false,
        },
      },
      mode: { type: 'string', enum: ['fast', 'slow'] },
      version: { const: 2 },
    },
    required: ['items'],
  }

  it('returns [] for valid values', () => {
    expect(validateJsonSchemaValue(schema, { items: [] })).toEqual([])
    expect(validateJsonSchemaValue(schema, { items: [{ when: 'now', count: 3 }], mode: 'fast', version: 2 })).toEqual(
      [],
    )
  })

  it('returns every violation, path-qualified', () => {
    const value = {
      items: [{ when: 'a' }, { when: 'b' }, { when: 'c' }, { when: 4, count: 1.5, extra: true }, {}],
      mode: 'medium',
      version: 3,
    }
    expect(validateJsonSchemaValue(schema, value).sort()).toEqual(
      [
        'value.items[3].when: expected string, got number',
        'value.items[3].count: expected integer, got 1.5',
        'value.items[3].extra: property is not allowed (additionalProperties: false)',
        'value.items[4].when: required property is missing',
        'value.mode: expected one of "fast", "slow"; got "medium"',
        'value.version: expected 2, got 3',
      ].sort(),
    )
  })

  it('reports a missing required property and a wrong root type', () => {
    expect(validateJsonSchemaValue(schema, {})).toEqual(['value.items: required property is missing'])
    expect(validateJsonSchemaValue(schema, [])).toEqual(['value: expected object, got array'])
    expect(validateJsonSchemaValue(schema, null)).toEqual(['value: expected object, got null'])
  })

  it('integer means a finite number without fractional part', () => {
    const int = { type: 'integer' } as const
    expect(validateJsonSchemaValue(int, 3)).toEqual([])
    expect(validateJsonSchemaValue(int, 3.0)).toEqual([])
    expect(validateJsonSchemaValue(int, 1e21)).toEqual([])
    expect(validateJsonSchemaValue(int, 3.5)).toEqual(['value: expected integer, got 3.5'])
    expect(validateJsonSchemaValue(int, Number.NaN)).toEqual(['value: is NaN, which is not JSON'])
    expect(validateJsonSchemaValue(int, '3')).toEqual(['value: expected integer, got string'])
    expect(validateJsonSchemaValue({ type: 'number' }, 3.5)).toEqual([])
    expect(validateJsonSchemaValue({ type: 'number' }, -0)).toHaveLength(1)
  })

  it('objects are open unless additionalProperties: false', () => {
    const open: JsonSchemaNode = { type: 'object', properties: { a: { type: 'string' } } }
    const openTrue: JsonSchemaNode = { ...open, additionalProperties: true }
    const closed: JsonSchemaNode = { ...open, additionalProperties: false }
    expect(validateJsonSchemaValue(open, { a: 'x', b: 1 })).toEqual([])
    expect(validateJsonSchemaValue(openTrue, { a: 'x', b: 1 })).toEqual([])
    expect(validateJsonSchemaValue(closed, { a: 'x', b: 1 })).toEqual([
      'value.b: property is not allowed (additionalProperties: false)',
    ])
    // Open extras must still be JSON.
    expect(validateJsonSchemaValue(open, { a: 'x', b: undefined })).toEqual([
      'value.b: is undefined, which is not JSON',
    ])
  })

  it('arrays without items accept any JSON items', () => {
    expect(validateJsonSchemaValue({ type: 'array' }, [1, 'a', null, [{}]])).toEqual([])
    expect(validateJsonSchemaValue({ type: 'array' }, [1, Number.NaN])).toEqual(['value[1]: is NaN, which is not JSON'])
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    expect(validateJsonSchemaValue({ type: 'array' }, [1, , 2])).toEqual([
      'value[1]: is a hole in a sparse array, which is not JSON',
    ])
  })

  it('oneOf requires exactly one branch: zero or two matches say which', () => {
    const union: JsonSchemaNode = { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'integer' }] }
    expect(validateJsonSchemaValue(union, 'x')).toEqual([])
    expect(validateJsonSchemaValue(union, 1.5)).toEqual([])
    expect(validateJsonSchemaValue(union, 2)).toEqual([
      'value: matched 2 oneOf branches (oneOf[1], oneOf[2]); exactly one must match',
    ])
    const none = validateJsonSchemaValue(union, true)
    expect(none).toHaveLength(1)
    expect(none[0]).toMatch(/^value: matched none of the 3 oneOf branches/)
    expect(none[0]).toContain('oneOf[0]: value: expected string, got boolean')
    expect(none[0]).toContain('oneOf[2]: value: expected integer, got boolean')
  })

  it('oneOf over objects discriminates by nested properties, also nested inside oneOf', () => {
    const shape: JsonSchemaNode = {
      type: 'array',
      items: {
        oneOf: [
          {
            type: 'object',
            properties: { kind: { const: 'circle' }, r: { type: 'number' } },
            required: ['kind', 'r'],
          },
          {
            type: 'object',
            properties: {
              kind: { const: 'poly' },
              points: { type: 'array', items: { oneOf: [{ type: 'integer' }, { type: 'string' }] } },
            },
            required: ['kind', 'points'],
          },
        ],
      },
    }
    expect(
      validateJsonSchemaValue(shape, [
        { kind: 'circle', r: 1 },
        { kind: 'poly', points: [1, 'a'] },
      ]),
    ).toEqual([])
    const bad = validateJsonSchemaValue(shape, [{ kind: 'poly', points: [1, true] }, { kind: 'circle' }])
    expect(bad).toHaveLength(2)
    expect(bad[0]).toMatch(/^value\[0\]: matched none/)
    expect(bad[0]).toContain('value[0].points[1]: matched none of the 2 oneOf branches')
    expect(bad[1]).toContain('value[1].r: required property is missing')
    const validator = getJsonSchemaValidator(shape)
    expect(validator.isValid([{ kind: 'poly', points: [1, true] }])).toBe(false)
    expect(validator.isValid([{ kind: 'circle', r: 2 }])).toBe(true)
  })

  it('non-JSON values in typed positions are violations; getters are not invoked', () => {
    let calls = 0
    const value = {
      items: [{ when: undefined }],
      get mode() {
        calls++
        return 'fast'
      },
    }
    expect(validateJsonSchemaValue(schema, value).sort()).toEqual(
      [
        'value.items[0].when: is undefined, which is not JSON',
        'value.mode: is an accessor property, which is not JSON (it was not invoked)',
      ].sort(),
    )
    expect(getJsonSchemaValidator(schema).isValid(value)).toBe(false)
    expect(calls).toBe(0)
    expect(validateJsonSchemaValue(schema, new Proxy({ items: [] }, {}))).toEqual([
      'value: is a Proxy, which is not JSON',
    ])
  })

  it('validates snapshots and raw values alike, with a custom root path', () => {
    const value = { items: [{ when: 1 }] }
    const validator = getJsonSchemaValidator(schema)
    expect(validator.violations(snapshotJsonValue(value), 'out')).toEqual([
      'out.items[0].when: expected string, got number',
    ])
    expect(validator.violations(value, 'out')).toEqual(['out.items[0].when: expected string, got number'])
    expect(validator.isValid(snapshotJsonValue({ items: [{ when: 'x' }] }))).toBe(true)
  })

  it('__proto__ keys validate as ordinary properties', () => {
    const protoSchema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"],"additionalProperties":false}',
    )
    expect(validateJsonSchemaValue(protoSchema, JSON.parse('{"__proto__":"x"}'))).toEqual([])
    expect(validateJsonSchemaValue(protoSchema, JSON.parse('{"__proto__":1}'))).toEqual([
      'value.__proto__: expected string, got number',
    ])
    expect(validateJsonSchemaValue(protoSchema, {})).toEqual(['value.__proto__: required property is missing'])
  })

  it('compiles once per schema object and throws JsonSchemaError for unsupported schemas', () => {
    expect(getJsonSchemaValidator(schema)).toBe(getJsonSchemaValidator(schema))
    expect(() => validateJsonSchemaValue({ type: 'string', minLength: 1 } as JsonSchemaNode, 'x')).toThrow(
      JsonSchemaError,
    )
  })
})

describe('R-JSCHEMA-5 assertObjectJsonSchema', () => {
  it('requires an object root and narrows', () => {
    const schema: unknown = { type: 'object', properties: {} }
    assertObjectJsonSchema(schema)
    expect(schema.type).toBe('object')
    expect(issuesOf({ type: 'string' }, assertObjectJsonSchema)).toEqual([
      'schema.type: an object-rooted schema must declare type "object", got "string"',
    ])
    expect(issuesOf({}, assertObjectJsonSchema)[0]).toContain('got no type')
    const combined = issuesOf({ type: 'array', minItems: 1 }, assertObjectJsonSchema)
    expect(combined).toHaveLength(2)
  })
})

describe('R-JSON-5 explicit stacks: 100,000-deep schemas and values', () => {
  const depth = 100_000
  const schema = nested(depth, { type: 'integer' })

  it('asserts and compiles a 100,000-deep schema', () => {
    expect(() => assertSupportedJsonSchema(schema)).not.toThrow()
    expect(getJsonSchemaValidator(schema)).toBeDefined()
  })

  it('validates a 100,000-deep value, valid and invalid', () => {
    const validator = getJsonSchemaValidator(schema)
    expect(validator.isValid(nestedValue(depth, 7))).toBe(true)
    expect(validator.isValid(snapshotJsonValue(nestedValue(depth, 7)))).toBe(true)
    const bad = nestedValue(depth, 'x')
    expect(validator.isValid(bad)).toBe(false)
    const violations = validator.violations(bad)
    expect(violations).toHaveLength(1)
    expect(violations[0].endsWith('[0][0]: expected integer, got string')).toBe(true)
  })

  it('handles a 100,000-deep chain of oneOf', () => {
    let chain: JsonSchemaNode = { type: 'string' }
    for (let i = 0; i < depth; i++) chain = { oneOf: [{ type: 'array', items: chain }, { type: 'null' }] }
    const validator = getJsonSchemaValidator(chain)
    expect(validator.isValid(nestedValue(depth, 'x'))).toBe(true)
    expect(validator.isValid(nestedValue(1000, null))).toBe(true)
    expect(validator.isValid(nestedValue(1000, 1))).toBe(false)
    expect(validator.isValid(null)).toBe(true)
    const violations = validator.violations(nestedValue(3, 1))
    expect(violations).toHaveLength(1)
    expect(violations[0]).toMatch(/^value: matched none of the 2 oneOf branches/)
    // Bounds a hang only: 200,000 schema nodes take seconds when another suite shares the cores.
  }, 180_000)

  it('validates a 100,000-deep value against an unconstrained schema', () => {
    expect(validateJsonSchemaValue({}, nestedValue(depth, null))).toEqual([])
    expect(validateJsonSchemaValue({ type: 'array' }, nestedValue(depth, undefined))).toHaveLength(1)
  })
})
