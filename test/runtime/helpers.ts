import type { ToolRunContext } from '../../src/contract/execution.js'
import type { JsonValue } from '../../src/contract/json-value.js'
import type { ToolDefinition } from '../../src/contract/tool-definition.js'

/** A raw definition: any JSON output, content is the value's JSON text. */
export function rawTool(
  name: string,
  execute: (args: unknown, exec: ToolRunContext) => Promise<unknown> = async (args) => ({ echo: args as JsonValue }),
  extra: Partial<ToolDefinition> = {},
): ToolDefinition {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: {} },
    output: { schema: {}, render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }] },
    execute,
    ...extra,
  }
}

export function signal(): AbortSignal {
  return new AbortController().signal
}

/** Deep-frozen check without recursion limits for test-sized values. */
export function isDeepFrozen(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length) {
    const v = stack.pop()
    if (typeof v !== 'object' || v === null) continue
    if (!Object.isFrozen(v)) return false
    for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key])
  }
  return true
}

export function deferred<T = void>(): {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
} {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
