// The presenters the viewer replays journal records through: the reference tools' own ones, plus
// whatever definitions the host passes. Presenters are pure and replay-safe (R-VIEW), so tool
// instances built here never run: they exist only for their `presentCall`/`presentResult`.
import { createRunCodeDefinition } from '../code-mode/run-code.js'
import type { ToolDefinition, ToolResult } from '../contract/tool-definition.js'
import type { ToolCallView, ToolResultView } from '../contract/views.js'
import { genericCallView, genericResultView } from '../presentation/generic.js'
import { isPlainRecord } from '../presentation/json-guard.js'
import { createBashTool, createFsTools } from '../tools/index.js'

/** What the viewer needs of a tool: its two presenters. */
export type ToolPresenter = Pick<ToolDefinition, 'name' | 'presentCall' | 'presentResult'>

// The presenter-only instances are rooted nowhere real; their bodies are never invoked.
const PRESENTER_ROOT = '/'

function referencePresenters(): ToolPresenter[] {
  const bash = createBashTool({ cwd: PRESENTER_ROOT })
  // The bash call card names the tool's configured cwd; a replay does not know the session's, so
  // the presenter-only instance's directory must not be shown as if it were.
  const bashPresenter: ToolPresenter = {
    name: bash.name,
    presentCall(args) {
      const view = bash.presentCall?.(args)
      if (view?.card === 'terminal') {
        const { cwd: _unknownCwd, ...rest } = view
        return rest
      }
      return view
    },
    presentResult: bash.presentResult,
  }
  const runCode = createRunCodeDefinition({
    execute: () => Promise.reject(new Error('the viewer never runs tools')),
    executionMode: () => ({ kind: 'exclusive' }),
    logDispatch: () => Promise.resolve(),
  })
  return [...createFsTools({ root: PRESENTER_ROOT }), bashPresenter, runCode]
}

/** A name → presenter table: the reference tools, overridden by `extra` of the same name. */
export function presenterTable(extra: readonly ToolPresenter[] = []): ReadonlyMap<string, ToolPresenter> {
  const table = new Map<string, ToolPresenter>()
  for (const p of referencePresenters()) table.set(p.name, p)
  for (const p of extra) table.set(p.name, p)
  return table
}

/** The pending card of a call; never throws (a presenter's failure gives the generic card). */
export function presentCallSafely(presenter: ToolPresenter | undefined, name: string, args: unknown): ToolCallView {
  try {
    const view = presenter?.presentCall?.(args)
    if (isPlainRecord(view)) return view
  } catch {
    // fall through to the generic card
  }
  return genericCallView(name, args)
}

/** The completed card of a call; never throws. */
export function presentResultSafely(
  presenter: ToolPresenter | undefined,
  name: string,
  args: unknown,
  result: ToolResult,
): ToolResultView {
  try {
    const view = presenter?.presentResult?.(args, result)
    if (isPlainRecord(view)) return view
  } catch {
    // fall through to the generic card
  }
  return genericResultView(result, result.isError ? `${name} failed` : name)
}
