// Which tool lists a server session has shown its client, so that `notifications/tools/list_changed`
// goes only to the sessions whose list really changed: a search that loads tools for one session's
// scope changes that session's list, not its neighbours'.
import type { Agent } from '../../contract/execution.js'
import type { ToolDefinition } from '../../contract/tool-definition.js'
import type { ToolRuntimeCore } from '../../runtime/index.js'

/** One listed tool: the definition behind it and the description the list showed (a transport's is rendered per scope). */
interface Shown {
  readonly definition: ToolDefinition | undefined
  readonly name: string
  readonly description: string
}

export class ToolListWatch {
  private readonly shown = new Map<Agent | undefined, readonly Shown[]>()
  private seeded: boolean

  /** Until the client lists, the session's own scope stands for what it will be shown. */
  constructor(
    private readonly tools: ToolRuntimeCore,
    private readonly initial: Agent | undefined,
  ) {
    this.shown.set(initial, this.snapshot(initial) ?? [])
    this.seeded = true
  }

  /** The client was shown `scope`'s list (a `tools/list` answer). */
  listed(scope: Agent | undefined): void {
    // The first listing replaces the stand-in when the caller is served another scope (its identity's).
    if (this.seeded && scope !== this.initial) this.shown.delete(this.initial)
    this.seeded = false
    this.shown.set(scope, this.snapshot(scope) ?? [])
  }

  /** Whether any list the client was shown differs now; the new lists become the ones shown. */
  changed(): boolean {
    let changed = false
    for (const [scope, before] of this.shown) {
      const now = this.snapshot(scope)
      // A scope that can no longer be listed (disposed) is dropped without a notification.
      if (now === undefined) {
        this.shown.delete(scope)
        continue
      }
      if (!same(before, now)) {
        changed = true
        this.shown.set(scope, now)
      }
    }
    return changed
  }

  private snapshot(scope: Agent | undefined): Shown[] | undefined {
    try {
      return this.tools.schemas(scope).map(({ name, description }) => ({
        name,
        description,
        definition: this.tools.get(name, scope),
      }))
    } catch {
      return undefined
    }
  }
}

function same(a: readonly Shown[], b: readonly Shown[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x.name !== y.name || x.description !== y.description || x.definition !== y.definition) return false
  }
  return true
}
