import { parameterSchemaSpecToJsonSchema } from './compile.js'
import type { ParameterSchemaSpec } from './spec.js'
import { type CompiledJsonSchemaValidator, getJsonSchemaValidator } from './validator.js'

/** The compiled argument validator of a parameter spec (compiled once per spec object). */
export function getArgsValidator(parameters: ParameterSchemaSpec): CompiledJsonSchemaValidator {
  return getJsonSchemaValidator(parameterSchemaSpecToJsonSchema(parameters))
}

/**
 * Every path-qualified violation of `args` against a parameter spec (`args.path: expected string, got number`),
 * empty when valid. Throws `JsonSchemaError` when the spec itself is invalid.
 */
export function validateArgs(parameters: ParameterSchemaSpec, args: unknown): string[] {
  return getArgsValidator(parameters).validate(args, 'args')
}
