import type { ContentBlock } from '../contract/content.js'
import type { ToolExecution, ToolExecutionResult, ToolRunContext } from '../contract/execution.js'
import type { JsonSchemaNode, ObjectJsonSchema } from '../contract/json-schema.js'
import type { JsonObject, JsonValue } from '../contract/json-value.js'
import type { ToolDefinition, ToolMeta, ToolOutputDefinition, ToolResult } from '../contract/tool-definition.js'
import type { ToolCallView, ToolResultView } from '../contract/views.js'
import { ConfigError } from '../errors/config-error.js'
import { parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema } from './compile.js'
import { ToolArgsError } from './errors.js'
import type { InferArgs, InferValue } from './infer.js'
import type { ParameterSchemaSpec, ValueSchemaSpec } from './spec.js'
import {
  type InferStandardOutput,
  isStandardSchema,
  type StandardJsonSchema,
  standardSchemaToJsonSchema,
} from './standard-schema.js'
import { snapshotToolMeta } from './tool-meta.js'
import { type CompiledJsonSchemaValidator, getJsonSchemaValidator } from './validator.js'

/** What `parameters` accepts: toolgate's parameter spec, or a Standard JSON Schema of an object (zod 4, arktype, …). */
export type ParametersInput = ParameterSchemaSpec | StandardJsonSchema
/** What `output.schema` accepts: toolgate's value spec, or a Standard JSON Schema. */
export type OutputSchemaInput = ValueSchemaSpec | StandardJsonSchema

/** The arguments `execute` receives for a `parameters` declaration (a Standard Schema's output type). */
export type ArgsOfSchema<P> = P extends StandardJsonSchema ? InferStandardOutput<P> : InferArgs<P>
/** The value `execute` returns for an `output.schema` declaration (a Standard Schema's output type). */
export type ValueOfSchema<O> = O extends StandardJsonSchema ? InferStandardOutput<O> : InferValue<O>

/** The typed output declaration an author writes. */
export interface DefineToolOutput<A, V, S extends OutputSchemaInput = OutputSchemaInput> {
  /** The output value spec (or a Standard JSON Schema); compiled to the raw `output.schema`. */
  readonly schema: S
  /** Pure projection from validated arguments and value to model content. */
  render(args: A, value: V): ContentBlock[]
  /** Pure replayable presentation projection, computed only for top-level calls. */
  presentationMeta?(args: A, value: V): JsonValue
}

/** What `defineTool` accepts: a `ToolDefinition` written against typed specs. */
export interface DefineToolSpec<P extends ParametersInput, O extends OutputSchemaInput> {
  readonly name: string
  readonly description: string
  readonly parameters: P
  readonly output: DefineToolOutput<ArgsOfSchema<P>, ValueOfSchema<O>, O>
  /** The body: runs only with arguments that passed validation, returns the declared output value. */
  execute(args: ArgsOfSchema<P>, exec: ToolRunContext): Promise<ValueOfSchema<O>>
  finalizeContent?(exec: Readonly<ToolExecution>, result: Readonly<ToolExecutionResult>): ContentBlock[] | undefined
  readonly timeoutMs?: number
  readonly idleTimeoutMs?: number
  /** Leave the tool out of `schemas()` and the Code Mode SDK until it is loaded (`true`), or never (`false`). */
  readonly defer?: boolean
  isConcurrencySafe?(args: ArgsOfSchema<P>): boolean
  /**
   * Ask the approval service before running: `true` for every call, or per call `(args, exec)`
   * returning `true` or a reason string to ask and `false` to proceed. Arguments that fail
   * validation are not asked about (the call fails with `INVALID_ARGS` without running).
   */
  readonly needsApproval?: boolean | ((args: ArgsOfSchema<P>, exec: Readonly<ToolExecution>) => boolean | string)
  /** What hosts that list the tool again pass on (title, annotations, icons); never model-visible. Snapshot and frozen. */
  readonly meta?: ToolMeta
  presentCall?(args: ArgsOfSchema<P>): ToolCallView | undefined
  presentResult?(args: ArgsOfSchema<P>, result: ToolResult): ToolResultView | undefined
}

declare const typedSpecs: unique symbol

/**
 * The definition `defineTool` returns: a plain `ToolDefinition` (compiled raw schemas, validating
 * `execute`) that also remembers its specs at the type level only (no runtime member).
 */
export interface TypedToolDefinition<P extends ParametersInput, O extends OutputSchemaInput> extends ToolDefinition {
  /** The compiled raw parameter schema (frozen, lossless JSON). */
  readonly parameters: ObjectJsonSchema & JsonObject
  readonly output: ToolOutputDefinition & { readonly schema: JsonSchemaNode }
  readonly [typedSpecs]?: { readonly parameters: P; readonly output: O }
}

/** Argument type of a `defineTool` definition. */
export type ToolArgsOf<T> = T extends TypedToolDefinition<infer P, OutputSchemaInput> ? ArgsOfSchema<P> : unknown
/** Output value type of a `defineTool` definition. */
export type ToolValueOf<T> = T extends TypedToolDefinition<ParametersInput, infer O> ? ValueOfSchema<O> : JsonValue

function definitionIssues(spec: Record<string, unknown>): string[] {
  const issues: string[] = []
  const fn = (value: unknown, path: string, optional: boolean): void => {
    if (value === undefined && optional) return
    if (typeof value !== 'function') issues.push(`${path}: must be a function`)
  }
  if (typeof spec.name !== 'string' || spec.name === '') issues.push('name: must be a non-empty string')
  if (typeof spec.description !== 'string') issues.push('description: must be a string')
  const output = spec.output as Record<string, unknown> | undefined
  if (typeof output !== 'object' || output === null) issues.push('output: must be an object with schema and render')
  else {
    fn(output.render, 'output.render', false)
    fn(output.presentationMeta, 'output.presentationMeta', true)
  }
  fn(spec.execute, 'execute', false)
  fn(spec.finalizeContent, 'finalizeContent', true)
  fn(spec.isConcurrencySafe, 'isConcurrencySafe', true)
  const needs = spec.needsApproval
  if (needs !== undefined && typeof needs !== 'boolean') fn(needs, 'needsApproval', true)
  fn(spec.presentCall, 'presentCall', true)
  fn(spec.presentResult, 'presentResult', true)
  if (spec.defer !== undefined && typeof spec.defer !== 'boolean') issues.push('defer: must be a boolean when present')
  for (const key of ['timeoutMs', 'idleTimeoutMs'] as const) {
    const ms = spec[key]
    if (ms !== undefined && (typeof ms !== 'number' || !(ms > 0) || !Number.isFinite(ms))) {
      issues.push(`${key}: must be a positive finite number of milliseconds`)
    }
  }
  return issues
}

/**
 * Declare a tool against typed specs, or against Standard JSON Schema objects (zod 4, arktype,
 * valibot's `toStandardJsonSchema`), whose output type types `execute`. Parameters and output compile once to frozen raw schemas;
 * `execute` validates the arguments with the cached validator and rejects with `ToolArgsError` before the
 * body runs; `render`/`presentationMeta` pass through (the pipeline calls them with validated arguments and
 * a validated value); `isConcurrencySafe`/`presentCall`/`presentResult` validate softly: invalid arguments
 * or a throwing callback yield `false`/`undefined`, never an exception.
 */
export function defineTool<const P extends ParametersInput, const O extends OutputSchemaInput>(
  spec: DefineToolSpec<P, O>,
): TypedToolDefinition<P, O> {
  const issues = definitionIssues(spec as unknown as Record<string, unknown>)
  const meta = snapshotToolMeta(spec.meta, 'meta')
  issues.push(...meta.issues)
  if (issues.length > 0) {
    const name = typeof spec.name === 'string' ? ` "${spec.name}"` : ''
    throw new ConfigError(`defineTool${name}`, issues)
  }
  const name = spec.name
  // A Standard JSON Schema brings its own converter; toolgate enforces the converted subset itself.
  const parameters = isStandardSchema(spec.parameters)
    ? standardSchemaToJsonSchema(spec.parameters, 'parameters', 'object')
    : parameterSchemaSpecToJsonSchema(spec.parameters as ParameterSchemaSpec)
  const outputSchema = isStandardSchema(spec.output.schema)
    ? standardSchemaToJsonSchema(spec.output.schema, 'output.schema')
    : valueSchemaSpecToJsonSchema(spec.output.schema as ValueSchemaSpec, 'output.schema')
  const args = getJsonSchemaValidator(parameters)
  // Compile the output validator now so the pipeline's first call does not pay for it.
  getJsonSchemaValidator(outputSchema)

  // Callbacks are captured once: later mutation of the author's object cannot change the definition.
  const authorOutput = spec.output
  const render = authorOutput.render
  const presentationMeta = authorOutput.presentationMeta
  const body = spec.execute
  type A = ArgsOfSchema<P>

  const output: ToolOutputDefinition = {
    schema: outputSchema,
    render: (a: unknown, value: JsonValue) => render.call(authorOutput, a as A, value as ValueOfSchema<O>),
  }
  if (presentationMeta !== undefined) {
    output.presentationMeta = (a: unknown, value: JsonValue) =>
      presentationMeta.call(authorOutput, a as A, value as ValueOfSchema<O>)
  }

  const definition: Omit<TypedToolDefinition<P, O>, 'output'> & { output: ToolOutputDefinition } = {
    name,
    description: spec.description,
    parameters: parameters as ObjectJsonSchema & JsonObject,
    output: Object.freeze(output),
    execute(a: unknown, exec: ToolRunContext): Promise<unknown> {
      // Not async: a valid call returns the body's own promise (no extra ticks on the hot path).
      if (!args.isValid(a)) return Promise.reject(new ToolArgsError(args.violations(a, 'args'), name))
      try {
        return body.call(spec, a as A, exec)
      } catch (error) {
        return Promise.reject(error)
      }
    },
  }
  const loose = spec as unknown as LooseSpec
  attachPolicies(definition as ToolDefinition, loose, args)
  attachPresenters(definition as ToolDefinition, loose, args)
  if (meta.meta !== undefined) (definition as { meta?: ToolMeta }).meta = meta.meta
  return Object.freeze(definition) as TypedToolDefinition<P, O>
}

/** The optional callbacks of a spec, with arguments as the validator sees them (unknown until checked). */
interface LooseSpec {
  readonly finalizeContent?: NonNullable<ToolDefinition['finalizeContent']>
  readonly timeoutMs?: number
  readonly idleTimeoutMs?: number
  readonly defer?: boolean
  readonly needsApproval?: boolean | ((args: unknown, exec: Readonly<ToolExecution>) => boolean | string)
  readonly isConcurrencySafe?: (args: unknown) => boolean
  readonly presentCall?: (args: unknown) => ToolCallView | undefined
  readonly presentResult?: (args: unknown, result: ToolResult) => ToolResultView | undefined
}

/** Deadlines, approval and scheduling: each callback sees only arguments that passed validation. */
function attachPolicies(definition: ToolDefinition, spec: LooseSpec, args: CompiledJsonSchemaValidator): void {
  const target = definition as { -readonly [K in keyof ToolDefinition]: ToolDefinition[K] }
  if (spec.finalizeContent !== undefined) {
    const finalize = spec.finalizeContent
    target.finalizeContent = (exec, result) => finalize.call(spec, exec, result)
  }
  if (spec.timeoutMs !== undefined) target.timeoutMs = spec.timeoutMs
  if (spec.idleTimeoutMs !== undefined) target.idleTimeoutMs = spec.idleTimeoutMs
  if (spec.defer !== undefined) target.defer = spec.defer
  const needsApproval = spec.needsApproval
  if (typeof needsApproval === 'boolean') target.needsApproval = needsApproval
  else if (needsApproval !== undefined) {
    target.needsApproval = (a: unknown, exec: Readonly<ToolExecution>): boolean | string =>
      args.isValid(a) ? needsApproval.call(spec, a, exec) : false
  }
  if (spec.isConcurrencySafe !== undefined) {
    const classify = spec.isConcurrencySafe
    target.isConcurrencySafe = (a: unknown): boolean => {
      if (!args.isValid(a)) return false
      try {
        return classify.call(spec, a) === true
      } catch {
        return false
      }
    }
  }
}

/** The card builders validate softly: invalid arguments or a throwing builder yield no card. */
function attachPresenters(definition: ToolDefinition, spec: LooseSpec, args: CompiledJsonSchemaValidator): void {
  const target = definition as { -readonly [K in keyof ToolDefinition]: ToolDefinition[K] }
  if (spec.presentCall !== undefined) {
    const present = spec.presentCall
    target.presentCall = (a: unknown): ToolCallView | undefined => {
      if (!args.isValid(a)) return undefined
      try {
        return present.call(spec, a)
      } catch {
        return undefined
      }
    }
  }
  if (spec.presentResult !== undefined) {
    const present = spec.presentResult
    target.presentResult = (a: unknown, result: ToolResult): ToolResultView | undefined => {
      if (!args.isValid(a)) return undefined
      try {
        return present.call(spec, a, result)
      } catch {
        return undefined
      }
    }
  }
}
