import type { JsonValue } from '../contract/json-value.js'
import type { ValueSchemaSpec } from './spec.js'

/** Exact inference covers this many container levels, then widens to `JsonValue`. */
type MaxDepth = 16

/** Flattens intersections for readable hovers and exact `expectTypeOf` comparisons. */
type Simplify<T> = { [K in keyof T]: T[K] } & {}

type Deeper<D extends unknown[]> = [...D, unknown]

type InferScalar<S, T> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: readonly (infer E)[] }
    ? E
    : T

type RequiredKeys<P> = {
  [K in keyof P]-?: K extends string ? (P[K] extends { readonly required: true } ? K : never) : never
}[keyof P]
type OptionalKeys<P> = {
  [K in keyof P]-?: K extends string ? (P[K] extends { readonly required: true } ? never : K) : never
}[keyof P]

/** Properties of an object spec (or the parameter root) at depth `D`. */
type InferProperties<P, D extends unknown[]> = string extends keyof P
  ? { [key: string]: JsonValue }
  : Simplify<
      { -readonly [K in RequiredKeys<P>]: InferValueAt<P[K], D> } & {
        -readonly [K in OptionalKeys<P>]?: InferValueAt<P[K], D>
      }
    >

type InferObject<S, D extends unknown[]> = S extends {
  readonly properties: infer P
  readonly additionalProperties: infer A
}
  ? A extends false
    ? keyof P extends never
      ? { [key: string]: never }
      : InferProperties<P, Deeper<D>>
    : InferProperties<P, Deeper<D>> & { [key: string]: JsonValue }
  : never

type InferArray<S, D extends unknown[]> = S extends { readonly items: infer I }
  ? InferValueAt<I, Deeper<D>>[]
  : JsonValue[]

/** Distributes over unions of specs (which is how `oneOf` branches are inferred). */
type InferValueAt<S, D extends unknown[]> = ValueSchemaSpec extends S
  ? JsonValue
  : S extends { readonly oneOf: readonly (infer B)[] }
    ? InferValueAt<B, D>
    : S extends { readonly type: infer T }
      ? T extends 'string'
        ? InferScalar<S, string>
        : T extends 'number' | 'integer'
          ? InferScalar<S, number>
          : T extends 'boolean'
            ? InferScalar<S, boolean>
            : T extends 'null'
              ? null
              : T extends 'json'
                ? JsonValue
                : D['length'] extends MaxDepth
                  ? JsonValue
                  : T extends 'array'
                    ? InferArray<S, D>
                    : T extends 'object'
                      ? InferObject<S, D>
                      : JsonValue
      : JsonValue

/**
 * Infer the TypeScript value accepted by an author-facing value schema. Exact inference is bounded to
 * 16 container levels, then falls back to `JsonValue`. Arrays infer as plain (mutable) `T[]`.
 */
export type InferValue<S> = InferValueAt<S, []>

/** Infer the TypeScript argument object of an implicit parameter schema: `required: true` keys are required. */
export type InferArgs<S> = InferProperties<S, []>
