// The MCP SDK's client compiles an Ajv validator for every output schema each time it lists tools,
// and its client and server each make an Ajv instance when constructed. A gateway lists an
// upstream's tools at start and on every change, yet calls only some of them: compiling at the
// first call instead keeps that work off the cold start and off every re-listing.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  JsonSchemaValidatorResult,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js'

/** What compiles a JSON Schema into a validator: the SDK's provider interface. */
export type SchemaValidators = jsonSchemaValidator

/** The SDK's Ajv provider, made at the first compilation and compiling each schema at its first use. */
export class LazyJsonSchemaValidator implements jsonSchemaValidator {
  private ajv: AjvJsonSchemaValidator | undefined

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let compiled: JsonSchemaValidator<T> | undefined
    return (input: unknown): JsonSchemaValidatorResult<T> => {
      if (compiled === undefined) {
        this.ajv ??= new AjvJsonSchemaValidator()
        compiled = this.ajv.getValidator<T>(schema)
      }
      return compiled(input)
    }
  }
}
