// R-PERF: the compiled validator side by side with Ajv on the same schemas and data.
// Run alone: `npx tsx bench/validator.bench.ts` (or through `npm run bench`).
import { Ajv, type ValidateFunction } from 'ajv'
import { do_not_optimize } from 'mitata'
import { isJsonValue, snapshotJsonValue } from '../src/json/index.js'
import { getJsonSchemaValidator, type JsonSchemaNode } from '../src/schema/index.js'
import { format, isMain, printTable, type Row, time } from './util.js'

interface Case {
  name: string
  schema: JsonSchemaNode
  valid: unknown
  invalid: unknown
}

function nestedItemsCase(): Case {
  const item: JsonSchemaNode = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'name', 'tags', 'meta'],
    properties: {
      id: { type: 'integer' },
      name: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
      meta: {
        type: 'object',
        required: ['score', 'ok'],
        properties: { score: { type: 'number' }, ok: { type: 'boolean' }, note: { type: 'string' } },
      },
      kind: { type: 'string', enum: ['file', 'dir', 'link'] },
    },
  }
  const schema: JsonSchemaNode = {
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: item }, cursor: { type: 'string' } },
  }
  const valid = {
    items: Array.from({ length: 20 }, (_, i) => ({
      id: i,
      name: `item ${i}`,
      tags: ['a', 'b', 'c'],
      meta: { score: i * 1.5, ok: i % 2 === 0 },
      kind: 'file',
    })),
    cursor: 'next',
  }
  const invalid = structuredClone(valid) as { items: Record<string, unknown>[] }
  for (const i of [3, 9, 15]) {
    invalid.items[i].id = 'x'
    invalid.items[i].kind = 'socket'
    ;(invalid.items[i].meta as Record<string, unknown>).ok = 'yes'
  }
  return { name: 'object with 20 nested items', schema, valid, invalid }
}

function wideCase(): Case {
  const properties: Record<string, JsonSchemaNode> = {}
  const valid: Record<string, unknown> = {}
  for (let i = 0; i < 200; i++) {
    properties[`p${i}`] = { type: i % 2 === 0 ? 'string' : 'number' }
    valid[`p${i}`] = i % 2 === 0 ? `v${i}` : i
  }
  const schema: JsonSchemaNode = {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties),
    properties,
  }
  const invalid = { ...valid }
  for (let i = 0; i < 200; i += 20) invalid[`p${i}`] = i
  return { name: 'wide 200-property object', schema, valid, invalid }
}

function oneOfCase(): Case {
  const shape = (kind: string, extra: Record<string, JsonSchemaNode>): JsonSchemaNode => ({
    type: 'object',
    required: ['kind', ...Object.keys(extra)],
    properties: { kind: { const: kind }, ...extra },
  })
  const schema: JsonSchemaNode = {
    type: 'array',
    items: {
      oneOf: [
        shape('circle', { r: { type: 'number' } }),
        shape('rect', { w: { type: 'number' }, h: { type: 'number' } }),
        shape('text', { body: { type: 'string' }, size: { type: 'integer' } }),
      ],
    },
  }
  const valid = Array.from({ length: 30 }, (_, i) =>
    i % 3 === 0
      ? { kind: 'circle', r: i }
      : i % 3 === 1
        ? { kind: 'rect', w: i, h: 2 }
        : { kind: 'text', body: 'hi', size: 12 },
  )
  const invalid = valid.map((v, i) => (i % 10 === 5 ? { ...v, kind: 'blob' } : v))
  return { name: 'oneOf union (30 items, 3 shapes)', schema, valid, invalid }
}

function deepCase(depth: number): Case {
  let schema: JsonSchemaNode = { type: 'integer' }
  let valid: unknown = 1
  let invalid: unknown = 'x'
  for (let i = 0; i < depth; i++) {
    schema = { type: 'array', items: schema }
    valid = [valid]
    invalid = [invalid]
  }
  return { name: `${depth.toLocaleString('en-US')}-deep array`, schema, valid, invalid }
}

/** Tool-argument-like data of about `bytes` JSON bytes. */
function payload(bytes: number): unknown {
  const items: unknown[] = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const item = {
      id: i,
      path: `src/file-${i}.ts`,
      line: i * 3,
      text: `const value${i} = compute(${i})`,
      tags: ['a', 'b'],
    }
    size += JSON.stringify(item).length + 1
    items.push(item)
  }
  return { query: 'compute', items }
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message)
}

function compileAjv(ajv: Ajv, schema: JsonSchemaNode): ValidateFunction | 'stack overflow' {
  try {
    const validate = ajv.compile(schema)
    return validate
  } catch (error) {
    if (isStackOverflow(error)) return 'stack overflow'
    throw error
  }
}

async function timeAjv(
  validate: ValidateFunction | 'stack overflow',
  value: unknown,
): Promise<number | 'stack overflow'> {
  if (validate === 'stack overflow') return validate
  try {
    validate(value)
  } catch (error) {
    if (isStackOverflow(error)) return 'stack overflow'
    throw error
  }
  return time(() => do_not_optimize(validate(value)))
}

const show = (t: number | 'stack overflow') => (typeof t === 'number' ? format(t) : t)
const ratio = (ours: number, theirs: number | 'stack overflow') =>
  typeof theirs === 'number' ? `${(ours / theirs).toFixed(2)}×` : 'n/a (Ajv overflows)'

export async function run(): Promise<Row[]> {
  const cases = [nestedItemsCase(), wideCase(), oneOfCase(), deepCase(1000), deepCase(100_000)]
  const rows: Row[] = []
  const valid: string[] = [
    '| case | ours, snapshot | Ajv, same snapshot | ratio | ours, raw object (incl. lossless-JSON proof) | Ajv, same raw object | ratio |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  const invalid: string[] = [
    '| case | ours, snapshot | Ajv allErrors, same snapshot | ratio | ours, raw object | Ajv allErrors, same raw object | ratio |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const c of cases) {
    const validator = getJsonSchemaValidator(c.schema)
    if (!validator.isValid(c.valid) || validator.isValid(c.invalid)) throw new Error(`bench case ${c.name} is wrong`)
    const snap = snapshotJsonValue(c.valid)
    const badSnap = snapshotJsonValue(c.invalid)
    // What validateJsonSchemaValue does: one proof, the allocation-free check, violations only when invalid.
    const all = (value: unknown) => validator.validate(value)
    const oursSnap = await time(() => do_not_optimize(validator.isValid(snap)))
    const oursRaw = await time(() => do_not_optimize(validator.isValid(c.valid)))
    const oursBadSnap = await time(() => do_not_optimize(all(badSnap)))
    const oursBadRaw = await time(() => do_not_optimize(all(c.invalid)))
    const ajvFirst = compileAjv(new Ajv({ allErrors: false }), c.schema)
    const ajvAll = compileAjv(new Ajv({ allErrors: true }), c.schema)
    const ajvSnap = await timeAjv(ajvFirst, snap)
    const ajvRaw = await timeAjv(ajvFirst, c.valid)
    const ajvBadSnap = await timeAjv(ajvAll, badSnap)
    const ajvBadRaw = await timeAjv(ajvAll, c.invalid)
    valid.push(
      `| ${c.name} | ${format(oursSnap)} | ${show(ajvSnap)} | ${ratio(oursSnap, ajvSnap)} | ${format(oursRaw)} | ${show(ajvRaw)} | ${ratio(oursRaw, ajvRaw)} |`,
    )
    invalid.push(
      `| ${c.name} (${validator.violations(badSnap).length} violations) | ${format(oursBadSnap)} | ${show(ajvBadSnap)} | ${ratio(oursBadSnap, ajvBadSnap)} | ${format(oursBadRaw)} | ${show(ajvBadRaw)} | ${ratio(oursBadRaw, ajvBadRaw)} |`,
    )
    rows.push(
      { name: `${c.name}: valid snapshot`, avgNs: oursSnap, ratio: ratio(oursSnap, ajvSnap) },
      { name: `${c.name}: valid raw object`, avgNs: oursRaw, ratio: ratio(oursRaw, ajvRaw) },
      {
        name: `${c.name}: invalid snapshot, all violations`,
        avgNs: oursBadSnap,
        ratio: ratio(oursBadSnap, ajvBadSnap),
      },
      { name: `${c.name}: invalid raw object, all violations`, avgNs: oursBadRaw, ratio: ratio(oursBadRaw, ajvBadRaw) },
    )
  }
  console.log('\n## Validator vs Ajv: valid data (ours `isValid` vs Ajv `allErrors: false`)\n')
  console.log(valid.join('\n'))
  console.log('\n## Validator vs Ajv: invalid data, every path-qualified violation (ours vs Ajv `allErrors: true`)\n')
  console.log(invalid.join('\n'))

  // Scaling: time per nesting level should stay flat (linear in depth).
  const scaling: Row[] = []
  for (const depth of [10, 100, 1000, 10_000, 100_000]) {
    const c = deepCase(depth)
    const validator = getJsonSchemaValidator(c.schema)
    const snap = snapshotJsonValue(c.valid)
    const ns = await time(() => do_not_optimize(validator.isValid(snap)), 200)
    const nsRaw = await time(() => do_not_optimize(validator.isValid(c.valid)), 200)
    scaling.push({
      name: `depth ${depth.toLocaleString('en-US')} (snapshot / raw)`,
      avgNs: ns,
      ratio: `${(ns / depth).toFixed(1)} / ${(nsRaw / depth).toFixed(1)} ns per level`,
    })
  }
  printTable('Validator scaling with nesting depth (valid value)', scaling)

  // The lossless snapshot every argument and result crosses, against the usual deep-copy idioms.
  const snapshots: Row[] = []
  for (const bytes of [1024, 1024 * 1024]) {
    const value = payload(bytes)
    const label = bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MB` : `${bytes / 1024} KB`
    const json = await time(() => do_not_optimize(JSON.parse(JSON.stringify(value))), 200)
    const ours = await time(() => do_not_optimize(snapshotJsonValue(value)), 200)
    const proof = await time(() => do_not_optimize(isJsonValue(value)), 200)
    const clone = await time(() => do_not_optimize(structuredClone(value)), 200)
    const snap = snapshotJsonValue(value)
    const again = await time(() => do_not_optimize(snapshotJsonValue(snap)), 100)
    snapshots.push(
      { name: `${label}: JSON.parse(JSON.stringify(v))`, avgNs: json, ratio: '1×' },
      {
        name: `${label}: snapshotJsonValue(v) (copy + deep freeze + proof)`,
        avgNs: ours,
        ratio: `${(ours / json).toFixed(2)}×`,
      },
      { name: `${label}: isJsonValue(v) (proof only)`, avgNs: proof, ratio: `${(proof / json).toFixed(2)}×` },
      {
        name: `${label}: structuredClone(v) (no proof, no freeze)`,
        avgNs: clone,
        ratio: `${(clone / json).toFixed(2)}×`,
      },
      {
        name: `${label}: snapshotJsonValue(snapshot) (fast path)`,
        avgNs: again,
        ratio: `${(again / json).toFixed(4)}×`,
      },
    )
  }
  printTable('Lossless snapshot cost', snapshots)
  return [...rows, ...scaling, ...snapshots]
}

if (isMain(import.meta.url)) await run()
