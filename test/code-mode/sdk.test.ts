import { createRequire } from 'node:module'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { jsonSchemaToTs, renderToolsSdk, type SdkToolEntry } from '../../src/code-mode/sdk.js'
import type { JsonSchemaNode } from '../../src/contract/json-schema.js'
import type { JsonValue } from '../../src/contract/json-value.js'

describe('R-CODE-1 jsonSchemaToTs: the raw subset', () => {
  it('maps scalar types, integer to number, and annotation-only nodes to JsonValue', () => {
    expect(jsonSchemaToTs({ type: 'string' })).toBe('string')
    expect(jsonSchemaToTs({ type: 'number' })).toBe('number')
    expect(jsonSchemaToTs({ type: 'integer' })).toBe('number')
    expect(jsonSchemaToTs({ type: 'boolean' })).toBe('boolean')
    expect(jsonSchemaToTs({ type: 'null' })).toBe('null')
    expect(jsonSchemaToTs({})).toBe('JsonValue')
    expect(jsonSchemaToTs({ title: 't', default: 1, examples: [1] })).toBe('/** t */ JsonValue')
    expect(jsonSchemaToTs({}, { jsonValueType: 'Json' })).toBe('Json')
  })

  it('renders enum and const as JSON literals, oneOf as a parenthesised union', () => {
    expect(jsonSchemaToTs({ type: 'string', enum: ['a', 'b"c'] })).toBe('("a" | "b\\"c")')
    expect(jsonSchemaToTs({ enum: [1, true, null] })).toBe('(1 | true | null)')
    expect(jsonSchemaToTs({ type: 'string', const: 'only' })).toBe('"only"')
    expect(jsonSchemaToTs({ const: -2.5 })).toBe('-2.5')
    expect(jsonSchemaToTs({ oneOf: [{ type: 'string' }, { type: 'integer' }] })).toBe('(string | number)')
    expect(jsonSchemaToTs({ type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'null' }] } })).toBe(
      '(string | null)[]',
    )
  })

  it('renders closed objects exactly and open objects as an intersection with an index signature', () => {
    const closed: JsonSchemaNode = {
      type: 'object',
      properties: { path: { type: 'string' }, 'max-count': { type: 'integer' } },
      required: ['path'],
      additionalProperties: false,
    }
    expect(jsonSchemaToTs(closed)).toBe('{\n  path: string\n  "max-count"?: number\n}')
    const open: JsonSchemaNode = { type: 'object', properties: { a: { type: 'boolean' } } }
    expect(jsonSchemaToTs(open)).toBe('({\n  a?: boolean\n} & { [key: string]: unknown })')
    expect(jsonSchemaToTs({ type: 'object' })).toBe('{ [key: string]: JsonValue }')
    expect(jsonSchemaToTs({ type: 'object', additionalProperties: false })).toBe('{ [key: string]: never }')
  })

  it('renders arrays with and without items', () => {
    expect(jsonSchemaToTs({ type: 'array' })).toBe('JsonValue[]')
    expect(jsonSchemaToTs({ type: 'array', items: { type: 'array', items: { type: 'number' } } })).toBe('number[][]')
  })

  it('turns descriptions and titles into doc comments and escapes the comment terminator', () => {
    const schema: JsonSchemaNode = {
      type: 'object',
      properties: {
        a: { type: 'string', title: 'A', description: 'first line\nends */ here' },
        b: { type: 'string', description: 'short' },
      },
      additionalProperties: false,
    }
    expect(jsonSchemaToTs(schema)).toBe(
      '{\n  /**\n   * A\n   *\n   * first line\n   * ends *\\/ here\n   */\n  a?: string\n  /** short */\n  b?: string\n}',
    )
  })

  it('quotes property names that are not identifiers', () => {
    const out = jsonSchemaToTs({
      type: 'object',
      properties: JSON.parse('{"a b":{},"$ok":{},"0":{},"__proto__":{},"quo\\"te":{}}') as Record<
        string,
        JsonSchemaNode
      >,
      additionalProperties: false,
    })
    expect(out).toContain('"a b"?: JsonValue')
    expect(out).toContain('$ok?: JsonValue')
    expect(out).toContain('"0"?: JsonValue')
    expect(out).toContain('"quo\\"te"?: JsonValue')
    expect(out).toContain('__proto__?: JsonValue')
  })

  it('renders a 100,000-deep schema without overflowing the stack', () => {
    let objects: JsonSchemaNode = { type: 'string' }
    let arrays: JsonSchemaNode = { type: 'string' }
    let unions: JsonSchemaNode = { type: 'string' }
    for (let i = 0; i < 100_000; i++) {
      objects = { type: 'object', properties: { a: objects }, required: ['a'], additionalProperties: false }
      arrays = { type: 'array', items: arrays }
      unions = { oneOf: [unions, { type: 'null' }] }
    }
    const o = jsonSchemaToTs(objects)
    expect(o.startsWith('{\n  a: {\n')).toBe(true)
    expect(o.split('a: ').length - 1).toBe(100_000)
    expect(jsonSchemaToTs(arrays)).toBe(`string${'[]'.repeat(100_000)}`)
    const u = jsonSchemaToTs(unions)
    expect(u.startsWith('('.repeat(100_000))).toBe(true)
    expect(u.split(' | null)').length - 1).toBe(100_000)
  })
})

describe('R-CODE-1 jsonSchemaToTs: raw model-facing schemas outside the subset', () => {
  it('understands anyOf and type arrays, widens unknown parts to JsonValue', () => {
    expect(jsonSchemaToTs({ anyOf: [{ type: 'string' }, { type: 'number' }] } as unknown as JsonValue)).toBe(
      '(string | number)',
    )
    expect(jsonSchemaToTs({ type: ['string', 'null'] } as unknown as JsonValue)).toBe('(string | null)')
    expect(jsonSchemaToTs({ $ref: '#/$defs/x' } as unknown as JsonValue)).toBe('JsonValue')
    expect(jsonSchemaToTs({ type: 'string', format: 'uri', minLength: 3, pattern: '^a' } as unknown as JsonValue)).toBe(
      'string',
    )
    expect(jsonSchemaToTs({ type: 'array', items: [{ type: 'string' }] } as unknown as JsonValue)).toBe('JsonValue[]')
    expect(jsonSchemaToTs({ type: 'object', additionalProperties: { type: 'string' } } as unknown as JsonValue)).toBe(
      '{ [key: string]: JsonValue }',
    )
    expect(jsonSchemaToTs({ type: 'date' } as unknown as JsonValue)).toBe('JsonValue')
    expect(jsonSchemaToTs({ enum: [{ a: 1 }] } as unknown as JsonValue)).toBe('JsonValue')
  })

  it('never throws on junk and widens a cyclic in-process schema', () => {
    for (const junk of [null, 3, 'x', [], true, false, { type: 42 }, { properties: 'nope' }, { oneOf: 'x' }]) {
      expect(() => jsonSchemaToTs(junk as JsonValue)).not.toThrow()
    }
    expect(jsonSchemaToTs(false as unknown as JsonValue)).toBe('never')
    expect(jsonSchemaToTs(true as unknown as JsonValue)).toBe('JsonValue')
    const cyclic: { type: string; properties: Record<string, unknown> } = { type: 'object', properties: {} }
    cyclic.properties.self = cyclic
    expect(jsonSchemaToTs(cyclic as unknown as JsonValue)).toBe(
      '({\n  self?: JsonValue\n} & { [key: string]: unknown })',
    )
  })
})

const readFile: SdkToolEntry = {
  name: 'read_file',
  description: 'Read a text file.\nReturns its lines.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Absolute path.' },
      offset: { type: 'integer' },
      mode: { type: 'string', enum: ['text', 'base64'] },
    },
    required: ['path'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: { lines: { type: 'array', items: { type: 'string' } }, total: { type: 'integer' } },
    required: ['lines', 'total'],
    additionalProperties: false,
  },
}

const oddName: SdkToolEntry = {
  name: 'mcp.search-docs',
  description: 'Search docs (an MCP tool with a raw schema).',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1 },
      filter: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
      extra: { $ref: '#/$defs/extra' },
    },
    required: ['query'],
  },
  outputSchema: {
    oneOf: [
      { type: 'object', properties: { kind: { const: 'hit' }, url: { type: 'string' } }, required: ['kind', 'url'] },
      { type: 'object', properties: { kind: { const: 'miss' } }, required: ['kind'], additionalProperties: false },
    ],
  },
}

function deepEntry(depth: number): SdkToolEntry {
  let node: JsonSchemaNode = { type: 'integer' }
  for (let i = 0; i < depth; i++) node = { type: 'object', properties: { next: node }, required: ['next'] }
  return { name: 'deep', description: '', parameters: { type: 'object', properties: { root: node } } }
}

const entries: SdkToolEntry[] = [
  oddName,
  readFile,
  deepEntry(30),
  { name: 'ping', description: 'No schema.', parameters: {} },
]

function typecheck(files: Record<string, string>): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
    skipLibCheck: true,
  }
  const host = ts.createCompilerHost(options)
  const libDir = path.dirname(createRequire(import.meta.url).resolve('typescript/lib/lib.d.ts'))
  const original = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, languageVersion, onError) => {
    const base = path.basename(fileName)
    if (base in files) return ts.createSourceFile(fileName, files[base], languageVersion, true)
    return original(fileName, languageVersion, onError)
  }
  host.fileExists = (fileName) => path.basename(fileName) in files || ts.sys.fileExists(fileName)
  host.getDefaultLibLocation = () => libDir
  const program = ts.createProgram(Object.keys(files), options, host)
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    )
}

describe('R-CODE-1 renderToolsSdk', () => {
  it('declares JsonValue, ToolArgsMap, ToolOutputMap and one typed binding per tool, sorted and deterministic', () => {
    const sdk = renderToolsSdk(entries)
    expect(renderToolsSdk([...entries].reverse())).toBe(sdk)
    expect(sdk).toContain(
      'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }',
    )
    expect(sdk).toContain('interface ToolArgsMap {')
    expect(sdk).toContain('interface ToolOutputMap {')
    expect(sdk).toContain('declare const tools: {')
    expect(sdk).toContain('  read_file(args: ToolArgsMap["read_file"]): Promise<ToolOutputMap["read_file"]>')
    expect(sdk).toContain(
      '"mcp.search-docs"(args: ToolArgsMap["mcp.search-docs"]): Promise<ToolOutputMap["mcp.search-docs"]>',
    )
    expect(sdk).toContain('  /**\n   * Read a text file.\n   * Returns its lines.\n   */\n  read_file(')
    expect(sdk).toContain('  ping: JsonValue\n')
    const order = ['deep', 'mcp.search-docs', 'ping', 'read_file'].map((name) =>
      sdk.indexOf(`${JSON.stringify(name)}]):`),
    )
    expect([...order].sort((a, b) => a - b)).toEqual(order)
  })

  it('keeps the first of duplicate names and renders an empty tool set', () => {
    const sdk = renderToolsSdk([readFile, { ...readFile, description: 'second' }])
    expect(sdk.match(/read_file\(args/g)).toHaveLength(1)
    expect(sdk).not.toContain('second')
    const empty = renderToolsSdk([], { preamble: false })
    expect(empty).toContain('declare const tools: {}')
    expect(empty).not.toContain('type JsonValue')
  })

  it('type-checks under tsc together with a program that uses it (and rejects misuse)', () => {
    const sdk = renderToolsSdk(entries)
    const program = `
declare const deepRoot: NonNullable<ToolArgsMap['deep']['root']>
async function main(): Promise<JsonValue> {
  const file = await tools.read_file({ path: '/a', mode: 'text' })
  const lines: string[] = file.lines
  const total: number = file.total
  const found = await tools['mcp.search-docs']({ query: 'x', filter: ['a'], anything: { nested: [1] } })
  if (found.kind === 'hit') { const url: string = found.url; void url }
  const deep = await tools.deep({ root: deepRoot })
  const leaf: number = deepRoot.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next
  const pinged: JsonValue = await tools.ping(null)
  try { await tools.ping({}) } catch (error) { if (error instanceof ToolCallError) { const n: string = error.toolName; void n } }
  // @ts-expect-error missing required path
  await tools.read_file({})
  // @ts-expect-error closed object rejects unknown keys
  await tools.read_file({ path: '/a', bogus: 1 })
  // @ts-expect-error enum literal
  await tools.read_file({ path: '/a', mode: 'binary' })
  // @ts-expect-error query must be a string
  await tools['mcp.search-docs']({ query: 1 })
  // @ts-expect-error lines are strings
  const wrong: number[] = file.lines
  console.log(lines.length, total, deep, pinged, wrong, leaf)
  return { lines, total }
}
void main
`
    expect(typecheck({ 'sdk.ts': sdk, 'program.ts': program })).toEqual([])
  })
})
