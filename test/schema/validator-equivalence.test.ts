import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { snapshotJsonValue } from '../../src/json/index.js'
import { compileNodes } from '../../src/schema/compiled-node.js'
import { getJsonSchemaValidator, type ValueSchemaSpec, valueSchemaSpecToJsonSchema } from '../../src/schema/index.js'
import { checkTrusted, collectViolations } from '../../src/schema/validator.js'
import { valueArb, valueSpecArb } from './spec-arbitraries.js'

const jsonArb = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown)

describe('R-DSL-9 / R-JSCHEMA-4 generated code and the stack interpreter agree', () => {
  it('on valid and arbitrary values: verdicts and violations (in order) are identical', () => {
    const cases = valueSpecArb(3).chain((spec) => fc.tuple(fc.constant(spec), fc.oneof(valueArb(spec), jsonArb)))
    fc.assert(
      fc.property(cases, ([spec, value]) => {
        const schema = valueSchemaSpecToJsonSchema(spec)
        const validator = getJsonSchemaValidator(schema)
        const root = compileNodes(schema)
        const snap = snapshotJsonValue(value)
        const interpreted = checkTrusted(root, snap)
        expect(validator.isValid(snap)).toBe(interpreted)
        expect(validator.isValid(value)).toBe(interpreted)
        const expected = collectViolations(root, snap, 'value', false)
        // Generated collector (snapshot), careful interpreter (raw value), interpreter (snapshot).
        expect(validator.violations(snap)).toEqual(expected)
        expect(validator.violations(value)).toEqual(expected)
        expect(collectViolations(root, value, 'value', true)).toEqual(expected)
        expect(expected.length === 0).toBe(interpreted)
      }),
      { numRuns: 1000 },
    )
  })

  it('past the inline depth limit (generated code hands over to the interpreter)', () => {
    const layer = fc.constantFrom('object', 'array', 'oneOf', 'closed')
    const chain = fc.tuple(fc.array(layer, { minLength: 66, maxLength: 80 }), valueSpecArb(1)).map(([layers, leaf]) => {
      let spec: ValueSchemaSpec = leaf
      for (const kind of layers) {
        if (kind === 'array') spec = { type: 'array', items: spec }
        else if (kind === 'oneOf') spec = { oneOf: [spec, { type: 'null' }] }
        else
          spec = {
            type: 'object',
            additionalProperties: kind !== 'closed',
            properties: { x: { ...spec, required: true } },
          }
      }
      return spec
    })
    const cases = chain.chain((spec) => fc.tuple(fc.constant(spec), fc.oneof(valueArb(spec), jsonArb)))
    fc.assert(
      fc.property(cases, ([spec, value]) => {
        const schema = valueSchemaSpecToJsonSchema(spec)
        const validator = getJsonSchemaValidator(schema)
        const root = compileNodes(schema)
        const snap = snapshotJsonValue(value)
        const expected = collectViolations(root, snap, 'value', false)
        expect(validator.isValid(snap)).toBe(checkTrusted(root, snap))
        expect(validator.isValid(snap)).toBe(expected.length === 0)
        expect(validator.violations(snap)).toEqual(expected)
      }),
      { numRuns: 200 },
    )
  })
})
