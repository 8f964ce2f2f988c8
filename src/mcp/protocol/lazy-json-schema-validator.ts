// The MCP SDK's client compiles an Ajv validator for every output schema each time it lists tools,
// and its client and server each make an Ajv instance when constructed. A gateway lists an
// upstream's tools at start and on every change, yet calls only some of them: compiling at the
// first call instead keeps that work off the cold start and off every re-listing.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv'

/** What one compiled schema says of a value (the SDK's validator result has this shape). */
export type SchemaValidatorResult<T> =
  | { valid: true; data: T; errorMessage: undefined }
  | { valid: false; data: undefined; errorMessage: string }

/** What compiles a JSON Schema into a validator (the SDK's provider interface has this shape). */
export interface SchemaValidators {
  getValidator<T>(schema: { [key: string]: unknown }): (input: unknown) => SchemaValidatorResult<T>
}

/** The SDK's Ajv provider, made at the first compilation and compiling each schema at its first use. */
export class LazyJsonSchemaValidator implements SchemaValidators {
  private ajv: AjvJsonSchemaValidator | undefined

  getValidator<T>(schema: { [key: string]: unknown }): (input: unknown) => SchemaValidatorResult<T> {
    let compiled: ((input: unknown) => SchemaValidatorResult<T>) | undefined
    return (input: unknown): SchemaValidatorResult<T> => {
      if (compiled === undefined) {
        this.ajv ??= new AjvJsonSchemaValidator()
        compiled = this.ajv.getValidator<T>(schema)
      }
      return compiled(input)
    }
  }
}
