// Gemini `parametersJsonSchema`: the JSON Schema subset the Gemini API accepts for declarations.
import type { JsonObject, JsonValue } from '../contract/json-value.js'
import { appendIndex, appendKey } from '../json/path.js'
import { isRecord } from '../util/is-record.js'

/** Keywords Gemini's JSON Schema support takes as they are. */
const KEPT = new Set([
  'type',
  'description',
  'title',
  'format',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'required',
  'additionalProperties',
])
/** Annotations Gemini does not list; dropping them loses no constraint. */
const DROPPED = new Set(['default', 'examples', '$schema', '$comment'])

/**
 * Project a parameter schema into what Gemini accepts: `oneOf` → `anyOf` (Gemini reads it that
 * way anyway), `const` → one-value `enum`; enums of anything but strings and numbers, and unknown
 * keywords, are dropped and listed as downgrades. toolgate still validates the full schema.
 */
export function toGeminiSchema(parameters: JsonValue, rootPath: string): { schema: JsonObject; downgrades: string[] } {
  const downgrades: string[] = []
  const schema = project(parameters, rootPath, downgrades)
  if (schema.type !== 'object') downgrades.push(`${rootPath}: Gemini expects an object schema at the root`)
  return { schema, downgrades }
}

function project(node: JsonValue, path: string, downgrades: string[]): JsonObject {
  if (!isRecord<JsonObject>(node)) {
    if (node !== true) downgrades.push(`${path}: a ${JSON.stringify(node)} schema was sent as an unconstrained one`)
    return {}
  }
  const out: JsonObject = {}
  for (const key of Object.keys(node)) {
    const value = node[key]
    if (key === 'enum' && 'const' in node) continue
    if (KEPT.has(key)) out[key] = value
    else if (key === 'properties' && isRecord<JsonObject>(value)) {
      const properties: JsonObject = {}
      for (const name of Object.keys(value)) {
        Object.defineProperty(properties, name, {
          value: project(value[name], appendKey(appendKey(path, 'properties'), name), downgrades),
          enumerable: true,
          writable: true,
          configurable: true,
        })
      }
      out.properties = properties
    } else if (key === 'items') out.items = project(value, appendKey(path, 'items'), downgrades)
    else if ((key === 'oneOf' || key === 'anyOf') && Array.isArray(value)) {
      out.anyOf = value.map((branch, i) => project(branch, appendIndex(appendKey(path, key), i), downgrades))
    } else if (key === 'enum' || key === 'const') {
      const values = key === 'const' ? [value] : Array.isArray(value) ? value : []
      const narrowed = 'const' in node && 'enum' in node ? [node.const] : values
      if (narrowed.every((v) => typeof v === 'string' || typeof v === 'number')) out.enum = narrowed
      else downgrades.push(`${appendKey(path, key)}: Gemini enums take strings and numbers only; sent without it`)
    } else if (!DROPPED.has(key)) downgrades.push(`${appendKey(path, key)}: not supported by Gemini; dropped`)
  }
  return out
}
