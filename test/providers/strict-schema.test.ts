// OpenAI strict mode: a checker written from the published rules, and a property test over random
// parameter specs (issue #12).
import Ajv from 'ajv'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { JsonObject, JsonValue } from '../../src/contract/json-value.js'
import type { ToolSchema } from '../../src/contract/tool-definition.js'
import { parseToolCalls, toProviderTools } from '../../src/providers/index.js'
import { acceptsNull } from '../../src/providers/strict-schema.js'
import { parameterSchemaSpecToJsonSchema } from '../../src/schema/index.js'
import { objectArb, parameterSpecArb } from '../schema/spec-arbitraries.js'

const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']
const KEYWORDS: Record<string, readonly string[]> = {
  any: ['type', 'description', 'enum', 'const', 'anyOf', '$ref', '$defs'],
  string: ['pattern', 'format'],
  number: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
  integer: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
  array: ['items', 'minItems', 'maxItems'],
  object: ['properties', 'required', 'additionalProperties'],
}

/**
 * Every violation of OpenAI's published strict-mode rules for function parameters: the root is an
 * object (not anyOf); every object sets additionalProperties: false and lists every property in
 * required; only the supported keywords appear; every node has a type (or is an anyOf); arrays
 * have items; at most 10 levels of object nesting, 5000 properties, 1000 enum values.
 */
function strictViolations(root: JsonValue): string[] {
  const out: string[] = []
  const totals = { properties: 0, enums: 0 }
  const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
  if (!isObj(root) || root.type !== 'object' || 'anyOf' in root) out.push('root: must be a type: object schema')
  const visit = (node: JsonValue, path: string, depth: number): void => {
    if (!isObj(node)) {
      out.push(`${path}: not a schema object`)
      return
    }
    if (Array.isArray(node.anyOf)) {
      for (const key of Object.keys(node))
        if (key !== 'anyOf' && key !== 'description') out.push(`${path}: ${key} beside anyOf`)
      node.anyOf.forEach((b, i) => {
        visit(b, `${path}.anyOf[${i}]`, depth)
      })
      return
    }
    const types = Array.isArray(node.type) ? node.type : [node.type]
    if (node.type === undefined || types.some((t) => typeof t !== 'string' || !TYPES.includes(t))) {
      out.push(`${path}: missing or unknown type ${JSON.stringify(node.type)}`)
      return
    }
    const allowed = new Set([...KEYWORDS.any, ...types.flatMap((t) => KEYWORDS[t as string] ?? [])])
    for (const key of Object.keys(node)) if (!allowed.has(key)) out.push(`${path}: keyword ${key} not supported`)
    if (Array.isArray(node.enum)) {
      totals.enums += node.enum.length
      for (const v of node.enum) {
        const kind = v === null ? 'null' : typeof v
        const ok = types.includes(kind) || (kind === 'number' && Number.isInteger(v) && types.includes('integer'))
        if (!ok) out.push(`${path}.enum: ${JSON.stringify(v)} does not match the type`)
      }
    }
    if (types.includes('object')) {
      if (depth > 10) out.push(`${path}: nested deeper than 10`)
      if (node.additionalProperties !== false) out.push(`${path}: additionalProperties must be false`)
      const properties = isObj(node.properties) ? node.properties : {}
      const keys = Object.keys(properties)
      totals.properties += keys.length
      const required = Array.isArray(node.required) ? node.required : []
      if (required.length !== keys.length || !keys.every((k) => required.includes(k)))
        out.push(`${path}: required must list every property`)
      for (const key of keys) visit(properties[key], `${path}.properties[${JSON.stringify(key)}]`, depth + 1)
    }
    if (types.includes('array')) {
      if (node.items === undefined) out.push(`${path}: array without items`)
      else visit(node.items, `${path}.items`, depth)
    }
  }
  visit(root, 'root', 1)
  if (totals.properties > 5000) out.push('more than 5000 properties')
  if (totals.enums > 1000) out.push('more than 1000 enum values')
  return out
}

/** What a strict model sends for a value: every absent optional key present as `null`. */
function asStrictModelSends(schema: JsonValue, value: unknown, onlyNullable: boolean): unknown {
  const s = schema as JsonObject
  const branches = (s.oneOf ?? s.anyOf) as JsonObject[] | undefined
  if (branches) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
    const branch = branches.find((b) => b.type === kind || (b.type === 'integer' && kind === 'number'))
    return branch ? asStrictModelSends(branch, value, onlyNullable) : value
  }
  if (Array.isArray(value))
    return s.items ? value.map((v) => asStrictModelSends(s.items as JsonValue, v, onlyNullable)) : value
  if (typeof value !== 'object' || value === null || typeof s.properties !== 'object') return value
  const properties = s.properties as JsonObject
  const out: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value))
    Object.defineProperty(out, key, {
      value: Object.hasOwn(properties, key) ? asStrictModelSends(properties[key], member, onlyNullable) : member,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  for (const key of Object.keys(properties)) {
    if (Object.hasOwn(out, key)) continue
    if (!onlyNullable || acceptsNull(properties[key]))
      Object.defineProperty(out, key, { value: null, enumerable: true, writable: true, configurable: true })
  }
  return out
}

function tool(parameters: JsonValue): ToolSchema {
  return { name: 'probe', description: 'probe', parameters }
}

describe("toProviderTools('openai-chat', …, { strict: true })", () => {
  it('property: each tool is either strict and satisfies every strict-mode rule, or non-strict with downgrades', () => {
    fc.assert(
      fc.property(parameterSpecArb, (spec) => {
        const parameters = parameterSchemaSpecToJsonSchema(spec) as unknown as JsonValue
        const { tools, downgrades } = toProviderTools('openai-chat', [tool(parameters)], { strict: true })
        const fn = tools[0].function
        if (fn.strict) {
          expect(downgrades).toEqual([])
          expect(strictViolations(fn.parameters as JsonValue)).toEqual([])
        } else {
          expect(downgrades.length).toBeGreaterThan(0)
          for (const d of downgrades) expect(d).toMatch(/^probe\.parameters(\.|\[|:)/)
          expect(fn.parameters).toEqual(parameters)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('property: a strict schema accepts what a strict model sends for any valid value, and parsing restores the value', () => {
    const ajv = new Ajv({ strict: false, allErrors: false })
    const cases = parameterSpecArb.chain((spec) => fc.tuple(fc.constant(spec), objectArb(spec, false)))
    let strictCases = 0
    fc.assert(
      fc.property(cases, ([spec, value]) => {
        const parameters = parameterSchemaSpecToJsonSchema(spec) as unknown as JsonValue
        const schemas = [tool(parameters)]
        const fn = toProviderTools('openai-chat', schemas, { strict: true }).tools[0].function
        if (!fn.strict) return
        strictCases++
        const sent = asStrictModelSends(parameters, value, false)
        // Ajv cannot judge a property named __proto__ (it never sees it as declared); everything else it can.
        if (!JSON.stringify(fn.parameters).includes('"__proto__"'))
          expect(ajv.validate(fn.parameters as object, sent), JSON.stringify(ajv.errors)).toBe(true)
        const response = {
          id: 'x',
          object: 'chat.completion' as const,
          created: 0,
          model: 'm',
          choices: [
            {
              index: 0,
              finish_reason: 'tool_calls' as const,
              logprobs: null,
              message: {
                role: 'assistant' as const,
                content: null,
                refusal: null,
                tool_calls: [
                  { id: 'c', type: 'function' as const, function: { name: 'probe', arguments: JSON.stringify(sent) } },
                ],
              },
            },
          ],
        }
        const [call] = parseToolCalls('openai-chat', response, { schemas, strict: true })
        // Only a null the original schema admits stays (it is a legitimate value there).
        expect(call.arguments).toEqual(asStrictModelSends(parameters, value, true))
      }),
      { numRuns: 300 },
    )
    expect(strictCases).toBeGreaterThan(30)
  })

  it('names what strict mode cannot express, path-qualified', () => {
    const parameters: JsonValue = {
      type: 'object',
      properties: {
        any: {},
        open: { type: 'object', properties: {}, additionalProperties: true },
        list: { type: 'array' },
        'odd key': { type: 'string', minLength: 2 },
      },
    }
    const { tools, downgrades } = toProviderTools('openai-responses', [tool(parameters)], { strict: true })
    expect(tools[0]).toMatchObject({ type: 'function', name: 'probe', strict: false, parameters })
    expect(downgrades).toEqual([
      'probe.parameters.properties.any: a schema without a type (any JSON value) cannot be expressed in strict mode',
      'probe.parameters.properties.open: an open object (additionalProperties true) cannot be expressed in strict mode',
      'probe.parameters.properties.list: an array without items (any JSON items) cannot be expressed in strict mode',
      'probe.parameters.properties["odd key"].minLength: keyword not supported in strict mode',
    ])
  })

  it('closes the implicit root, turns oneOf into anyOf and const into a one-value enum', () => {
    const parameters: JsonValue = {
      type: 'object',
      title: 'dropped',
      properties: {
        mode: { const: 'fast', description: 'the mode' },
        value: {
          oneOf: [
            { type: 'string' },
            { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
          ],
        },
      },
      required: ['mode'],
    }
    const { tools, downgrades } = toProviderTools('openai-chat', [tool(parameters)], { strict: true })
    expect(downgrades).toEqual([])
    expect(tools[0].function.parameters).toEqual({
      type: 'object',
      properties: {
        mode: { description: 'the mode', enum: ['fast'], type: 'string' },
        value: {
          anyOf: [
            { type: 'string' },
            {
              type: 'object',
              properties: { n: { type: ['integer', 'null'] } },
              required: ['n'],
              additionalProperties: false,
            },
            { type: 'null' },
          ],
        },
      },
      required: ['mode', 'value'],
      additionalProperties: false,
    })
    expect(strictViolations(tools[0].function.parameters as JsonValue)).toEqual([])
  })

  it('without strict, sends every schema as it is', () => {
    const parameters: JsonValue = { type: 'object', properties: { a: { type: 'string' } } }
    const { tools, downgrades } = toProviderTools('openai-chat', [tool(parameters)])
    expect(tools).toEqual([
      { type: 'function', function: { name: 'probe', description: 'probe', parameters, strict: false } },
    ])
    expect(downgrades).toEqual([])
  })
})
