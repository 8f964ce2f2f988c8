import type { CodeBindingOutcome } from './code-runtime.js'

/**
 * A binding's outcome as the JSON text the sandbox parses, or the length of a value too large to
 * enter it: the text and what the program parses from it are alive together in the sandbox's heap,
 * so a text longer than half the memory limit cannot fit. The worker runtime encodes on the host,
 * so an oversized value never crosses to the worker at all.
 */
export type EncodedBindingOutcome =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'too-large'; readonly valueLength: number }

export function encodeBindingOutcome(outcome: CodeBindingOutcome, memoryLimitBytes: number): EncodedBindingOutcome {
  let text: string
  let valueLength = 0
  try {
    if (outcome.ok) {
      const value = JSON.stringify(outcome.value)
      valueLength = value.length
      text = `{"ok":true,"value":${value}}`
    } else {
      text = JSON.stringify({ ok: false, toolName: outcome.toolName, message: outcome.message })
    }
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    text = JSON.stringify({
      ok: false,
      toolName: outcome.ok ? '' : outcome.toolName,
      message: `the tool's value could not cross into the sandbox: ${message}`,
    })
  }
  if (text.length * 2 > memoryLimitBytes) return { kind: 'too-large', valueLength: valueLength || text.length }
  return { kind: 'text', text }
}
