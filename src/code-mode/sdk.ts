import type { JsonSchemaNode } from '../contract/json-schema.js'
import type { JsonValue } from '../contract/json-value.js'
import { isRecord } from '../util/is-record.js'

/**
 * Rendering of raw JSON Schema to TypeScript declarations for the Code Mode SDK.
 *
 * Parameters are model-facing raw schemas that may use keywords outside the enforced subset
 * (an MCP server's `anyOf`, `$ref`, `format`, …). The renderer understands the subset plus a few
 * common shapes (`anyOf`, `type` arrays) and widens everything else to `JsonValue`: the SDK type
 * is always a superset of what the tool accepts or returns, and rendering never throws.
 * Every traversal uses an explicit work stack.
 */

/** One tool as the SDK sees it: its model-facing schema plus, when known, its output schema. */
export interface SdkToolEntry {
  readonly name: string
  readonly description: string
  /** Raw model-facing JSON Schema of the arguments (may use keywords outside the subset). */
  readonly parameters: JsonValue | JsonSchemaNode
  /** Output schema of the canonical value; missing renders `JsonValue`. */
  readonly outputSchema?: JsonSchemaNode | JsonValue
}

export interface JsonSchemaToTsOptions {
  /** Type name referenced for unconstrained parts. Default `JsonValue`. */
  readonly jsonValueType?: string
  /** Indentation level (two spaces per level) of the lines the rendering continues on. Default 0. */
  readonly indentLevel?: number
}

export interface RenderToolsSdkOptions {
  /** Emit the `JsonValue`, `ToolCallError` and `console` preamble. Default true. */
  readonly preamble?: boolean
  /** More members of `tools`, as declaration lines (the type checker's loosely declared deferred tools). */
  readonly extraBindings?: readonly string[]
}

/** Indentation stops growing past this level so a 100,000-deep schema renders in linear size. */
const MAX_INDENT = 12
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

type Task =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'node'; readonly schema: unknown; readonly depth: number; readonly doc: boolean }
  | { readonly kind: 'leave'; readonly schema: object }

type SchemaRecord = { readonly [key: string]: unknown }

function own(record: SchemaRecord, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined
}

function isScalar(value: unknown): value is string | number | boolean | null {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  )
}

function indent(depth: number): string {
  return '  '.repeat(Math.min(depth, MAX_INDENT))
}

/** A property key as written in a type literal: bare identifier or a JSON string literal. */
export function tsPropertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name)
}

function literal(value: string | number | boolean | null): string {
  // JSON.stringify(-0) is "0"; both denote the same literal type.
  return JSON.stringify(value)
}

function escapeDoc(text: string): string {
  return text.replace(/\*\//g, '*\\/')
}

function docText(schema: SchemaRecord): string | undefined {
  const title = own(schema, 'title')
  const description = own(schema, 'description')
  const parts: string[] = []
  if (typeof title === 'string' && title.trim() !== '') parts.push(title.trim())
  if (typeof description === 'string' && description.trim() !== '') parts.push(description.trim())
  return parts.length === 0 ? undefined : parts.join('\n\n')
}

/** A `/** … *\/` block on its own lines at `depth`, ending with a newline and the indentation. */
export function docComment(text: string, depth: number): string {
  const pad = indent(depth)
  const lines = escapeDoc(text).split(/\r\n|\r|\n/)
  if (lines.length === 1) return `/** ${lines[0]} */\n${pad}`
  return `/**\n${lines.map((line) => (line === '' ? `${pad} *` : `${pad} * ${line}`)).join('\n')}\n${pad} */\n${pad}`
}

function inlineDoc(text: string): string {
  return `/** ${escapeDoc(text).replace(/\s*(\r\n|\r|\n)\s*/g, ' ')} */ `
}

const TYPE_NAMES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'])

/** Render one node; children are pushed as further tasks (the caller's stack is LIFO). */
function expand(schema: unknown, depth: number, jsonValue: string, push: (task: Task) => void): string | undefined {
  if (schema === true) return jsonValue
  if (schema === false) return 'never'
  if (!isRecord<SchemaRecord>(schema)) return jsonValue

  const constValue = own(schema, 'const')
  if (constValue !== undefined) return isScalar(constValue) ? literal(constValue) : jsonValue
  const enumValue = own(schema, 'enum')
  if (enumValue !== undefined) {
    if (!Array.isArray(enumValue) || !enumValue.every(isScalar)) return jsonValue
    if (enumValue.length === 0) return 'never'
    const literals = enumValue.map(literal)
    return literals.length === 1 ? literals[0] : `(${literals.join(' | ')})`
  }
  // An unresolved reference could be anything.
  if (own(schema, '$ref') !== undefined || own(schema, '$dynamicRef') !== undefined) return jsonValue

  const branches = Array.isArray(own(schema, 'oneOf'))
    ? (own(schema, 'oneOf') as unknown[])
    : Array.isArray(own(schema, 'anyOf'))
      ? (own(schema, 'anyOf') as unknown[])
      : undefined
  if (branches !== undefined && branches.length > 0) {
    const base = withoutKeys(schema, ['oneOf', 'anyOf', 'title', 'description'])
    const constrained = hasStructure(base)
    // (base & (b1 | b2)) when the node also constrains itself, else (b1 | b2).
    const tasks: Task[] = [{ kind: 'text', text: constrained ? '(' : '' }]
    if (constrained) tasks.push({ kind: 'node', schema: base, depth, doc: false }, { kind: 'text', text: ' & ' })
    tasks.push({ kind: 'text', text: branches.length > 1 ? '(' : '' })
    branches.forEach((branch, index) => {
      if (index > 0) tasks.push({ kind: 'text', text: ' | ' })
      tasks.push({ kind: 'node', schema: branch, depth, doc: true })
    })
    tasks.push({ kind: 'text', text: branches.length > 1 ? ')' : '' })
    tasks.push({ kind: 'text', text: constrained ? ')' : '' })
    for (let i = tasks.length - 1; i >= 0; i--) push(tasks[i])
    return undefined
  }

  const type = own(schema, 'type')
  if (Array.isArray(type)) {
    const names = type.filter((name): name is string => typeof name === 'string' && TYPE_NAMES.has(name))
    if (names.length !== type.length || names.length === 0) return jsonValue
    if (names.length === 1) return expand({ ...schema, type: names[0] }, depth, jsonValue, push)
    const tasks: Task[] = [{ kind: 'text', text: '(' }]
    names.forEach((name, index) => {
      if (index > 0) tasks.push({ kind: 'text', text: ' | ' })
      tasks.push({
        kind: 'node',
        schema: { ...withoutKeys(schema, ['title', 'description']), type: name },
        depth,
        doc: false,
      })
    })
    tasks.push({ kind: 'text', text: ')' })
    for (let i = tasks.length - 1; i >= 0; i--) push(tasks[i])
    return undefined
  }

  switch (type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array':
      return expandArray(schema, depth, jsonValue, push)
    case 'object':
      return expandObject(schema, depth, jsonValue, push)
    case undefined:
      if (isRecord<SchemaRecord>(own(schema, 'properties')) || own(schema, 'additionalProperties') === false)
        return expandObject(schema, depth, jsonValue, push)
      if (own(schema, 'items') !== undefined) return expandArray(schema, depth, jsonValue, push)
      return jsonValue
    default:
      return jsonValue
  }
}

function withoutKeys(schema: SchemaRecord, keys: readonly string[]): SchemaRecord {
  const copy: { [key: string]: unknown } = {}
  for (const key of Object.keys(schema)) if (!keys.includes(key)) copy[key] = schema[key]
  return copy
}

function hasStructure(schema: SchemaRecord): boolean {
  return ['type', 'const', 'enum', 'properties', 'items', 'additionalProperties', '$ref'].some(
    (key) => own(schema, key) !== undefined,
  )
}

function expandArray(
  schema: SchemaRecord,
  depth: number,
  jsonValue: string,
  push: (task: Task) => void,
): string | undefined {
  const items = own(schema, 'items')
  // Tuple-form `items` (an array) and absent items both widen to JSON items.
  if (items === undefined || Array.isArray(items)) return `${jsonValue}[]`
  push({ kind: 'text', text: '[]' })
  push({ kind: 'node', schema: items, depth, doc: true })
  return undefined
}

function expandObject(
  schema: SchemaRecord,
  depth: number,
  jsonValue: string,
  push: (task: Task) => void,
): string | undefined {
  const properties = own(schema, 'properties')
  const names = isRecord<SchemaRecord>(properties) ? Object.keys(properties) : []
  const closed = own(schema, 'additionalProperties') === false
  const requiredList = own(schema, 'required')
  const required = new Set(Array.isArray(requiredList) ? requiredList.filter((name) => typeof name === 'string') : [])
  if (names.length === 0) return closed ? '{ [key: string]: never }' : `{ [key: string]: ${jsonValue} }`

  const inner = indent(depth + 1)
  const tasks: Task[] = [{ kind: 'text', text: closed ? '{\n' : '({\n' }]
  for (const name of names) {
    const child = (properties as SchemaRecord)[name]
    const doc = isRecord<SchemaRecord>(child) ? docText(child) : undefined
    const key = `${tsPropertyKey(name)}${required.has(name) ? '' : '?'}: `
    tasks.push({ kind: 'text', text: `${inner}${doc === undefined ? '' : docComment(doc, depth + 1)}${key}` })
    tasks.push({ kind: 'node', schema: child, depth: depth + 1, doc: false })
    tasks.push({ kind: 'text', text: '\n' })
  }
  // Open objects are an intersection with an `unknown` index signature: a `JsonValue` one does not
  // type-check beside optional members, nor once such an object nests inside another open object.
  tasks.push({ kind: 'text', text: closed ? `${indent(depth)}}` : `${indent(depth)}} & { [key: string]: unknown })` })
  for (let i = tasks.length - 1; i >= 0; i--) push(tasks[i])
  return undefined
}

function render(schema: unknown, options: JsonSchemaToTsOptions | undefined, rootDoc: boolean): string {
  const jsonValue = options?.jsonValueType ?? 'JsonValue'
  const out: string[] = []
  const stack: Task[] = [{ kind: 'node', schema, depth: options?.indentLevel ?? 0, doc: rootDoc }]
  // Nodes on the current path: a cyclic in-process schema widens instead of rendering forever.
  const active = new Set<object>()
  const push = (task: Task) => {
    stack.push(task)
  }
  while (stack.length > 0) {
    const task = stack.pop()!
    if (task.kind === 'text') {
      out.push(task.text)
      continue
    }
    if (task.kind === 'leave') {
      active.delete(task.schema)
      continue
    }
    const { schema: node, depth } = task
    if (typeof node === 'object' && node !== null) {
      if (active.has(node)) {
        out.push(jsonValue)
        continue
      }
      active.add(node)
      stack.push({ kind: 'leave', schema: node })
    }
    if (task.doc && isRecord<SchemaRecord>(node)) {
      const doc = docText(node)
      if (doc !== undefined) out.push(inlineDoc(doc))
    }
    const text = expand(node, depth, jsonValue, push)
    if (text !== undefined) out.push(text)
  }
  return out.join('')
}

/**
 * Render a raw JSON Schema as a TypeScript type expression (deterministic, never throws).
 * Scalars map to their TS types (`integer` → `number`), `enum`/`const` to literal unions,
 * `oneOf`/`anyOf` to parenthesised unions, closed objects to exact type literals, open objects to
 * `({ … } & { [key: string]: unknown })` (or `{ [key: string]: JsonValue }` without declared
 * properties), arrays to `T[]`, and anything unconstrained or not
 * understood to `JsonValue`. Property descriptions and titles become doc comments.
 */
export function jsonSchemaToTs(schema: JsonSchemaNode | JsonValue, options?: JsonSchemaToTsOptions): string {
  return render(schema, options, true)
}

/** Quote a tool name for an indexed access type or element access (`ToolArgsMap["odd-name"]`). */
function indexKey(name: string): string {
  return JSON.stringify(name)
}

const PREAMBLE = `/** Any lossless JSON value: what crosses between the program and its tools. */
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A failed tool call rejects with this error; it carries only the tool name and the failure message. */
declare class ToolCallError extends Error {
  readonly name: 'ToolCallError'
  readonly toolName: string
  readonly message: string
}

/** Captured program output (returned as \`logs\`); there is no other I/O. */
declare const console: {
  log(...values: unknown[]): void
  info(...values: unknown[]): void
  warn(...values: unknown[]): void
  error(...values: unknown[]): void
}
`

/**
 * Render the Code Mode SDK for a set of tools: `ToolArgsMap`, `ToolOutputMap` and
 * `declare const tools`, one typed async binding per tool returning its canonical value.
 * Entries are sorted by name (first occurrence of a duplicate wins) so the text is stable
 * across registration orders. Odd names are quoted (`tools["odd-name"](args)`).
 */
export function renderToolsSdk(schemas: readonly SdkToolEntry[], options?: RenderToolsSdkOptions): string {
  const seen = new Set<string>()
  const entries: SdkToolEntry[] = []
  for (const entry of schemas) {
    if (seen.has(entry.name)) continue
    seen.add(entry.name)
    entries.push(entry)
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

  const args: string[] = []
  const outputs: string[] = []
  const bindings: string[] = []
  for (const entry of entries) {
    const key = tsPropertyKey(entry.name)
    const argsDoc = isRecord<SchemaRecord>(entry.parameters) ? docText(entry.parameters) : undefined
    args.push(
      `  ${argsDoc === undefined ? '' : docComment(argsDoc, 1)}${key}: ${render(entry.parameters, { indentLevel: 1 }, false)}`,
    )
    const output = entry.outputSchema
    const outputDoc = isRecord<SchemaRecord>(output) ? docText(output) : undefined
    outputs.push(
      `  ${outputDoc === undefined ? '' : docComment(outputDoc, 1)}${key}: ${
        output === undefined ? 'JsonValue' : render(output, { indentLevel: 1 }, false)
      }`,
    )
    const description = entry.description.trim()
    bindings.push(
      `  ${description === '' ? '' : docComment(description, 1)}${key}(args: ToolArgsMap[${indexKey(entry.name)}]): Promise<ToolOutputMap[${indexKey(entry.name)}]>`,
    )
  }
  const block = (head: string, lines: string[]) =>
    lines.length === 0 ? `${head} {}\n` : `${head} {\n${lines.join('\n')}\n}\n`
  const parts = [
    block('/** Arguments of each tool, by name. */\ninterface ToolArgsMap', args),
    block('/** Canonical (structured) result of each tool, by name. */\ninterface ToolOutputMap', outputs),
    block('/** One async binding per tool; a failed call rejects with `ToolCallError`. */\ndeclare const tools:', [
      ...bindings,
      ...(options?.extraBindings ?? []),
    ]),
  ]
  if (options?.preamble !== false) parts.unshift(PREAMBLE)
  return parts.join('\n')
}
