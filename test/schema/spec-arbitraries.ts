import fc from 'fast-check'
import type { ObjectPropertySpec, ParameterSchemaSpec, ValueSchemaSpec } from '../../src/schema/index.js'

/** Property names that must behave as ordinary keys everywhere. */
export const KEYS = ['a', 'b', 'name', 'odd key', '__proto__', 'constructor', 'prototype', '0'] as const

type Kind = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object'

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

const annotations = fc.record({ description: fc.string({ maxLength: 8 }) }, { requiredKeys: [] })

function scalarSpec(kind: 'string' | 'number' | 'integer' | 'boolean' | 'null'): fc.Arbitrary<ValueSchemaSpec> {
  switch (kind) {
    case 'string':
      return fc.oneof(
        fc.constant({ type: 'string' as const }),
        fc
          .uniqueArray(fc.string({ maxLength: 4 }), { minLength: 1, maxLength: 3 })
          .map((e) => ({ type: 'string' as const, enum: e })),
        fc.string({ maxLength: 4 }).map((c) => ({ type: 'string' as const, const: c })),
      )
    case 'number':
      return fc.constant({ type: 'number' as const })
    case 'integer':
      return fc.oneof(
        fc.constant({ type: 'integer' as const }),
        fc
          .uniqueArray(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 3 })
          .map((e) => ({ type: 'integer' as const, enum: e.map((n) => n + 0) })),
      )
    case 'boolean':
      return fc.oneof(
        fc.constant({ type: 'boolean' as const }),
        fc.boolean().map((c) => ({ type: 'boolean' as const, const: c })),
      )
    case 'null':
      return fc.constant({ type: 'null' as const })
  }
}

/** Random value specs (bounded depth). oneOf branches are kind-disjoint so generated values match exactly one. */
export function valueSpecArb(depth = 3): fc.Arbitrary<ValueSchemaSpec> {
  const leaf = fc.oneof(
    scalarSpec('string'),
    scalarSpec('number'),
    scalarSpec('integer'),
    scalarSpec('boolean'),
    scalarSpec('null'),
    fc.constant({ type: 'json' as const }),
  )
  if (depth <= 0) return fc.tuple(leaf, annotations).map(([s, a]) => ({ ...a, ...s }) as ValueSchemaSpec)
  const inner = valueSpecArb(depth - 1)
  const array = fc
    .option(inner, { nil: undefined })
    .map((items) => (items === undefined ? ({ type: 'array' } as const) : ({ type: 'array', items } as const)))
  const object = fc.tuple(propertiesArb(inner), fc.boolean()).map(([properties, additionalProperties]) => ({
    type: 'object' as const,
    properties,
    additionalProperties,
  }))
  const byKind: Record<Kind, fc.Arbitrary<ValueSchemaSpec>> = {
    string: scalarSpec('string'),
    number: scalarSpec('number'),
    boolean: scalarSpec('boolean'),
    null: scalarSpec('null'),
    array,
    object,
  }
  const oneOf = fc
    .uniqueArray(fc.constantFrom<Kind>('string', 'number', 'boolean', 'null', 'array', 'object'), {
      minLength: 2,
      maxLength: 3,
    })
    .chain((kinds) => fc.tuple(...kinds.map((k) => byKind[k])))
    .map((branches) => ({ oneOf: branches as unknown as [ValueSchemaSpec, ValueSchemaSpec] }))
  return fc.oneof({ weight: 3, arbitrary: leaf }, array, object, oneOf)
}

function propertiesArb(inner: fc.Arbitrary<ValueSchemaSpec>): fc.Arbitrary<Record<string, ObjectPropertySpec>> {
  return fc
    .uniqueArray(fc.tuple(fc.constantFrom(...KEYS), inner, fc.boolean()), { maxLength: 4, selector: ([k]) => k })
    .map((entries) => {
      const props: Record<string, ObjectPropertySpec> = {}
      for (const [key, spec, required] of entries) setOwn(props, key, required ? { ...spec, required: true } : spec)
      return props
    })
}

export const parameterSpecArb: fc.Arbitrary<ParameterSchemaSpec> = propertiesArb(
  valueSpecArb(2),
) as fc.Arbitrary<ParameterSchemaSpec>

/** Values satisfying a spec. */
export function valueArb(spec: ValueSchemaSpec): fc.Arbitrary<unknown> {
  if ('oneOf' in spec) return fc.oneof(...spec.oneOf.map(valueArb))
  const s = spec as { type: string; enum?: readonly unknown[]; const?: unknown }
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum !== undefined) return fc.constantFrom(...s.enum)
  switch (s.type) {
    case 'string':
      return fc.string({ maxLength: 6 })
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => n + 0)
    case 'integer':
      return fc.integer().map((n) => n + 0)
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'json':
      return fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)))
    case 'array': {
      const items = (spec as { items?: ValueSchemaSpec }).items
      return fc.array(
        items === undefined ? fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.parse(JSON.stringify(v))) : valueArb(items),
        {
          maxLength: 3,
        },
      )
    }
    case 'object': {
      const o = spec as { properties: Record<string, ObjectPropertySpec>; additionalProperties: boolean }
      return objectArb(o.properties, o.additionalProperties)
    }
    default:
      throw new Error(`unknown spec ${JSON.stringify(spec)}`)
  }
}

export function objectArb(
  properties: Record<string, ObjectPropertySpec>,
  open: boolean,
): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(properties)
  const members = keys.map((key) =>
    fc.tuple(
      fc.constant(key),
      valueArb(properties[key]),
      properties[key].required === true ? fc.constant(true) : fc.boolean(),
    ),
  )
  const extras = open
    ? fc.array(fc.tuple(fc.constantFrom('x1', 'x2', 'extra'), fc.integer()), { maxLength: 2 })
    : fc.constant([])
  return fc.tuple(fc.tuple(...members), extras).map(([entries, extra]) => {
    const out: Record<string, unknown> = {}
    for (const [key, value, present] of entries) if (present) setOwn(out, key, value)
    for (const [key, value] of extra) if (!keys.includes(key)) setOwn(out, key, value)
    return out
  })
}

/** A value of a kind the spec never accepts (`undefined` when every JSON kind is accepted). */
export function wrongValue(spec: ValueSchemaSpec): unknown {
  const accepted = new Set<string>()
  const stack: ValueSchemaSpec[] = [spec]
  while (stack.length > 0) {
    const s = stack.pop()!
    if ('oneOf' in s) stack.push(...s.oneOf)
    else if (s.type === 'json') return undefined
    else accepted.add(s.type === 'integer' ? 'number' : s.type)
  }
  const candidates: [string, unknown][] = [
    ['string', 'wrong'],
    ['number', 1.25],
    ['boolean', true],
    ['null', null],
    ['array', []],
    ['object', {}],
  ]
  for (const [kind, value] of candidates) if (!accepted.has(kind)) return value
  return undefined
}
