// The check and snapshot of a definition's `meta`: one place, so `defineTool` and registration
// accept and refuse the same things, and what is registered can no longer change.
import type { JsonObject } from '../contract/json-value.js'
import type { ToolMeta } from '../contract/tool-definition.js'
import { snapshotJsonValue } from '../json/index.js'

const FIELDS = ['title', 'annotations', 'icons', 'execution', '_meta', 'imported'] as const
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A deep-frozen JSON snapshot of `value` as a `ToolMeta`, or the issues that refuse it (each
 * path-qualified under `path`). Unknown fields are refused, so a misspelt one is not silently
 * dropped; an annotation object may carry hints beyond the ones named here, as MCP's may.
 */
export function snapshotToolMeta(value: unknown, path: string): { meta?: ToolMeta; issues: string[] } {
  if (value === undefined) return { issues: [] }
  if (!isObject(value)) return { issues: [`${path}: expected an object when present`] }
  let meta: JsonObject
  try {
    meta = snapshotJsonValue(value, path) as JsonObject
  } catch (error) {
    return { issues: [(error as Error).message] }
  }
  const issues: string[] = []
  for (const key of Object.keys(meta)) {
    if (!(FIELDS as readonly string[]).includes(key))
      issues.push(`${path}.${key}: not a meta field (expected ${FIELDS.join(', ')})`)
  }
  const { title, annotations, icons, execution, _meta, imported } = meta
  if (title !== undefined && typeof title !== 'string') issues.push(`${path}.title: expected a string`)
  if (annotations !== undefined) {
    if (!isObject(annotations)) issues.push(`${path}.annotations: expected an object`)
    else {
      if (annotations.title !== undefined && typeof annotations.title !== 'string')
        issues.push(`${path}.annotations.title: expected a string`)
      for (const hint of HINTS) {
        if (annotations[hint] !== undefined && typeof annotations[hint] !== 'boolean')
          issues.push(`${path}.annotations.${hint}: expected a boolean`)
      }
    }
  }
  if (icons !== undefined && !(Array.isArray(icons) && icons.every(isObject)))
    issues.push(`${path}.icons: expected an array of objects`)
  if (execution !== undefined && !isObject(execution)) issues.push(`${path}.execution: expected an object`)
  if (_meta !== undefined && !isObject(_meta)) issues.push(`${path}._meta: expected an object`)
  if (imported !== undefined) {
    if (!isObject(imported)) issues.push(`${path}.imported: expected an object`)
    else {
      for (const key of Object.keys(imported))
        if (key !== 'outputSchema') issues.push(`${path}.imported.${key}: not a field (expected outputSchema)`)
      if (imported.outputSchema !== undefined && !isObject(imported.outputSchema))
        issues.push(`${path}.imported.outputSchema: expected an object`)
    }
  }
  return issues.length > 0 ? { issues } : { meta: meta as ToolMeta, issues }
}
