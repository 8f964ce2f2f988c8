import type { JsonSchemaNode, JsonSchemaScalar } from '../contract/json-schema.js'

// JSON kinds as bits so a node's allowed types are one mask test.
export const K_NULL = 1
export const K_BOOL = 2
export const K_NUM = 4
export const K_STR = 8
export const K_ARR = 16
export const K_OBJ = 32
export const K_ANY = 63

/** One compiled schema node. Fixed shape so the interpreter's property reads stay monomorphic. */
export interface CNode {
  /** Allowed JSON kinds. */
  mask: number
  /** `type: integer`: numbers must have no fractional part. */
  integer: boolean
  /** Expected-type wording for messages. */
  typeName: string
  enumValues: readonly JsonSchemaScalar[] | null
  enumSet: ReadonlySet<JsonSchemaScalar> | null
  hasConst: boolean
  constValue: JsonSchemaScalar
  /** `type: object` node: declared properties (parallel arrays) and their index. */
  objectNode: boolean
  propKeys: string[]
  propNodes: CNode[]
  propIndex: Map<string, number>
  required: string[]
  closed: boolean
  /** `type: array` node item schema (null = any JSON item). */
  items: CNode | null
  oneOf: CNode[] | null
  /** No constraint at all: any lossless JSON value. */
  trivial: boolean
}

const TYPE_MASK: Record<string, number> = {
  null: K_NULL,
  boolean: K_BOOL,
  number: K_NUM,
  integer: K_NUM,
  string: K_STR,
  array: K_ARR,
  object: K_OBJ,
}

export function newNode(schema: JsonSchemaNode): CNode {
  const type = schema.type
  const enumValues = schema.enum ?? null
  return {
    mask: type === undefined ? K_ANY : TYPE_MASK[type],
    integer: type === 'integer',
    typeName: type ?? 'any JSON value',
    enumValues,
    enumSet: enumValues !== null && enumValues.length > 8 ? new Set(enumValues) : null,
    hasConst: Object.hasOwn(schema, 'const'),
    constValue: schema.const ?? null,
    objectNode: type === 'object',
    propKeys: [],
    propNodes: [],
    propIndex: new Map(),
    required: schema.required ? [...schema.required] : [],
    closed: schema.additionalProperties === false,
    items: null,
    oneOf: null,
    trivial: type === undefined && enumValues === null && !Object.hasOwn(schema, 'const') && schema.oneOf === undefined,
  }
}

/** Compile a (supported) schema into a node graph with an explicit work stack. Shared subschemas compile once. */
export function compileNodes(schema: JsonSchemaNode): CNode {
  const compiled = new Map<JsonSchemaNode, CNode>()
  const root = newNode(schema)
  compiled.set(schema, root)
  const todo: [JsonSchemaNode, CNode][] = [[schema, root]]
  const nodeOf = (child: JsonSchemaNode): CNode => {
    let node = compiled.get(child)
    if (node === undefined) {
      node = newNode(child)
      compiled.set(child, node)
      todo.push([child, node])
    }
    return node
  }
  while (todo.length > 0) {
    const [s, n] = todo.pop()!
    if (s.properties !== undefined) {
      for (const key of Object.keys(s.properties)) {
        n.propIndex.set(key, n.propKeys.length)
        n.propKeys.push(key)
        n.propNodes.push(nodeOf(s.properties[key]))
      }
    }
    if (s.items !== undefined) n.items = nodeOf(s.items)
    if (s.oneOf !== undefined) n.oneOf = s.oneOf.map(nodeOf)
  }
  return root
}
