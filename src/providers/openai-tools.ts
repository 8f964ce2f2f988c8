// OpenAI (chat and responses) function definitions: strict projection with a per-tool fallback.
import type { JsonObject } from '../json/json-value.js'
import type { ToolSchema } from '../schema/tool-definition.js'
import { toStrictSchema } from './strict-schema.js'

export interface OpenAIFunction {
  readonly name: string
  readonly description: string
  readonly parameters: JsonObject
  readonly strict: boolean
}

/**
 * Each tool strict when asked and expressible; a tool with anything strict mode cannot say is
 * sent non-strict with its original schema, and every reason is listed in `downgrades`.
 */
export function openAIFunctions(
  schemas: readonly ToolSchema[],
  strict: boolean,
): { functions: OpenAIFunction[]; downgrades: string[] } {
  const functions: OpenAIFunction[] = []
  const downgrades: string[] = []
  for (const schema of schemas) {
    const original = schema.parameters as JsonObject
    if (!strict) {
      functions.push({ name: schema.name, description: schema.description, parameters: original, strict: false })
      continue
    }
    const projected = toStrictSchema(schema.parameters, `${schema.name}.parameters`)
    if (projected.downgrades.length === 0) {
      functions.push({ name: schema.name, description: schema.description, parameters: projected.schema, strict: true })
    } else {
      downgrades.push(...projected.downgrades)
      functions.push({ name: schema.name, description: schema.description, parameters: original, strict: false })
    }
  }
  return { functions, downgrades }
}
