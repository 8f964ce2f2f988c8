import type { ToolDefinition, ToolResult } from '../contract/tool-definition.js'
import type { FileDiff, ToolCallView, ToolResultView } from '../contract/views.js'
import { genericCallView, genericResultView } from '../presentation/generic.js'
import { isPlainRecord, readOwn } from '../presentation/json-guard.js'

// Narrowing readers for replayed `meta`: a log may hold anything, and presenters must never throw.

export function record(value: unknown): Record<string, unknown> | undefined {
  return isPlainRecord(value) ? value : undefined
}

export function str(r: Record<string, unknown>, key: string): string | undefined {
  const v = readOwn(r, key)
  return typeof v === 'string' ? v : undefined
}

export function int(r: Record<string, unknown>, key: string): number | undefined {
  const v = readOwn(r, key)
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined
}

export function bool(r: Record<string, unknown>, key: string): boolean | undefined {
  const v = readOwn(r, key)
  return typeof v === 'boolean' ? v : undefined
}

export function list(r: Record<string, unknown>, key: string): unknown[] | undefined {
  const v = readOwn(r, key)
  return Array.isArray(v) ? v : undefined
}

/** A list whose every item passes `read`, or `undefined` if any fails. */
export function listOf<T>(items: unknown[] | undefined, read: (item: unknown) => T | undefined): T[] | undefined {
  if (items === undefined) return undefined
  const out: T[] = []
  for (const item of items) {
    const v = read(item)
    if (v === undefined) return undefined
    out.push(v)
  }
  return out
}

export function readFileDiff(item: unknown): FileDiff | undefined {
  const r = record(item)
  if (r === undefined) return undefined
  const path = str(r, 'path')
  const newText = str(r, 'newText')
  const oldRaw = readOwn(r, 'oldText')
  if (path === undefined || newText === undefined || (oldRaw !== null && typeof oldRaw !== 'string')) return undefined
  return { path, oldText: oldRaw, newText }
}

/**
 * A `presentResult` that is total: error results and anything the builder cannot make sense of
 * (malformed meta from an old log, a builder bug) become the generic card with the raw content.
 */
export function resultPresenter<A>(
  toolName: string,
  build: (args: A, meta: Record<string, unknown>, result: ToolResult) => ToolResultView | undefined,
): (args: A, result: ToolResult) => ToolResultView {
  return (args, result) => {
    if (record(result) === undefined) return genericResultView(undefined, toolName)
    if (result.isError) return genericResultView(result, `${toolName} failed`)
    try {
      const meta = record(result.meta)
      const view = meta === undefined ? undefined : build(args, meta, result)
      return view ?? genericResultView(result, toolName)
    } catch {
      return genericResultView(result, toolName)
    }
  }
}

/** A `presentCall` that is total: a throwing or empty builder gives the generic pending card. */
export function callPresenter<A>(
  toolName: string,
  build: (args: A) => ToolCallView | undefined,
): (args: A) => ToolCallView {
  return (args) => {
    try {
      return build(args) ?? genericCallView(toolName, args)
    } catch {
      return genericCallView(toolName, args)
    }
  }
}

/**
 * `defineTool` answers `undefined` when a presenter's arguments fail soft validation (the seed's
 * "fall back to generic"). The reference tools make that fallback concrete, so a UI always gets a
 * card: the generic pending card with the raw input, or the generic completed card with the content.
 */
export function withGenericFallback(def: ToolDefinition): ToolDefinition {
  const { presentCall, presentResult } = def
  return Object.freeze({
    ...def,
    presentCall(args: unknown): ToolCallView {
      let view: ToolCallView | undefined
      try {
        view = presentCall?.call(def, args)
      } catch {
        view = undefined
      }
      return view ?? genericCallView(def.name, args)
    },
    presentResult(args: unknown, result: ToolResult): ToolResultView {
      let view: ToolResultView | undefined
      try {
        view = presentResult?.call(def, args, result)
      } catch {
        view = undefined
      }
      if (view !== undefined) return view
      return genericResultView(result, record(result)?.isError === true ? `${def.name} failed` : def.name)
    },
  })
}
