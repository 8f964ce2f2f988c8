/**
 * The author-facing schema DSL. One vocabulary for typed parameters and typed output
 * values; `defineTool` infers TypeScript types from it and compiles it to the raw subset (R-JSCHEMA).
 */

/** Annotations every spec node may carry. */
export interface SchemaSpecAnnotations {
  readonly description?: string
  readonly title?: string
}

/** A string; `enum`/`const` are typed to strings (a number enum is a type error). */
export interface StringValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'string'
  readonly enum?: readonly string[]
  readonly const?: string
}

/** Any finite number. */
export interface NumberValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'number'
  readonly enum?: readonly number[]
  readonly const?: number
}

/** A finite number without fractional part. */
export interface IntegerValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'integer'
  readonly enum?: readonly number[]
  readonly const?: number
}

export interface BooleanValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'boolean'
  readonly enum?: readonly boolean[]
  readonly const?: boolean
}

export interface NullValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'null'
  readonly enum?: readonly null[]
  readonly const?: null
}

/** An array; without `items` any JSON items are accepted. */
export interface ArrayValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'array'
  readonly items?: ValueSchemaSpec
}

/** A property of an object spec (or of the parameter root): a value spec, optionally `required: true`. */
export type ObjectPropertySpec = ValueSchemaSpec & { readonly required?: true }

/** An object; openness is always explicit. */
export interface ObjectValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'object'
  readonly properties: { readonly [key: string]: ObjectPropertySpec }
  readonly additionalProperties: boolean
}

/** Author-only: any lossless JSON value. Infers `JsonValue`, compiles to an annotation-only node. */
export interface JsonValueSchemaSpec extends SchemaSpecAnnotations {
  readonly type: 'json'
}

/** Exactly one of at least two branches. */
export interface OneOfValueSchemaSpec extends SchemaSpecAnnotations {
  readonly oneOf: readonly [ValueSchemaSpec, ValueSchemaSpec, ...ValueSchemaSpec[]]
}

/** One author-facing schema for any lossless JSON value root. */
export type ValueSchemaSpec =
  | StringValueSchemaSpec
  | NumberValueSchemaSpec
  | IntegerValueSchemaSpec
  | BooleanValueSchemaSpec
  | NullValueSchemaSpec
  | ArrayValueSchemaSpec
  | ObjectValueSchemaSpec
  | JsonValueSchemaSpec
  | OneOfValueSchemaSpec

/** One implicit parameter-root property, optionally required. */
export type ParameterPropertySpec = ValueSchemaSpec & { readonly required?: true }

/**
 * Tool parameter schema. The map itself is an implicit open object root; requiredness is a
 * per-property `required: true` annotation.
 */
export type ParameterSchemaSpec = {
  [key: string]: ParameterPropertySpec
  [key: symbol]: never
}
