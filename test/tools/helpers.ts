import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { ToolExecutionToken, ToolProgress, ToolRunContext } from '../../src/contract/execution.js'
import type { ToolDefinition, ToolResult } from '../../src/contract/tool-definition.js'

/** A minimal `ToolRunContext` around a fresh AbortController. */
export function fakeRunContext(
  name: string,
  args: unknown,
  controller = new AbortController(),
  onProgress: (progress: ToolProgress) => void = () => {},
): ToolRunContext {
  return {
    callId: `call-${name}`,
    rootCallId: `call-${name}`,
    parentCallId: null,
    name,
    arguments: args as ToolRunContext['arguments'],
    signal: controller.signal,
    token: Symbol(name) as ToolExecutionToken,
    deferContext() {},
    concludeTurn() {},
    progress: onProgress,
  }
}

export function byName(defs: readonly ToolDefinition[], name: string): ToolDefinition {
  const def = defs.find((d) => d.name === name)
  if (def === undefined) throw new Error(`no tool ${name}`)
  return def
}

/** One call the way the pipeline would make it, plus the durable result a log would keep. */
export interface CallRecord {
  value: unknown
  result: ToolResult
}

/** Execute, render and project like the pipeline does for a top-level call, then round-trip through JSON. */
export async function runTool(def: ToolDefinition, args: unknown, controller?: AbortController): Promise<CallRecord> {
  const value = await def.execute(args, fakeRunContext(def.name, args, controller))
  const content = def.output.render(args, value as never)
  const meta = def.output.presentationMeta?.(args, value as never)
  // The durable log is JSON: what a replay sees has been through stringify/parse.
  const result = JSON.parse(JSON.stringify({ isError: false, content, meta })) as ToolResult
  return { value, result }
}

export function textOf(result: ToolResult): string {
  return result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
}

export async function tempDir(prefix: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), `toolgate-${prefix}-`)))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 5 }) }
}
