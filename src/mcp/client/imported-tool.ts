// What a remote tool becomes as a toolgate definition's listed parts: its description, its input
// schema and the metadata served again as the server listed it. The connection's definitions and
// the CLI's first listing (made before the runtime exists) both take them from here.
import type { JsonObject, JsonValue } from '../../contract/json-value.js'
import type { ToolAnnotations, ToolMeta } from '../../contract/tool-definition.js'
import { snapshotJsonValue } from '../../json/index.js'
import { isRecord } from '../../util/is-record.js'
import type { Tool } from '../protocol/wire-types.js'

/** The listed parts of `tool` (each a frozen snapshot; throws on a value that is not JSON). */
export interface ImportedToolParts {
  readonly description: string
  readonly parameters: JsonValue
  readonly meta: ToolMeta
}

export function importedToolParts(tool: Tool): ImportedToolParts {
  const annotations = tool.annotations as ToolAnnotations | undefined
  const remoteOutput = tool.outputSchema as Record<string, unknown> | undefined
  const at = `tools[${tool.name}]`
  // What the server listed beside the schema, served again as it is (registration freezes it).
  const meta: { -readonly [K in keyof ToolMeta]: ToolMeta[K] } = {
    imported: remoteOutput === undefined ? {} : { outputSchema: snapshotObject(remoteOutput, `${at}.outputSchema`) },
  }
  if (typeof tool.title === 'string') meta.title = tool.title
  if (annotations !== undefined) meta.annotations = snapshotObject(annotations, `${at}.annotations`)
  if (isRecord(tool.execution)) meta.execution = snapshotObject(tool.execution, `${at}.execution`)
  if (Array.isArray(tool.icons)) meta.icons = snapshotJsonValue(tool.icons, `${at}.icons`) as JsonObject[]
  if (isRecord(tool._meta)) meta._meta = snapshotObject(tool._meta, `${at}._meta`)
  return {
    description: tool.description ?? tool.title ?? '',
    parameters: snapshotJsonValue(tool.inputSchema, `tools[${tool.name}].inputSchema`),
    meta,
  }
}

function snapshotObject(value: object, path: string): JsonObject {
  return snapshotJsonValue(value, path) as JsonObject
}
