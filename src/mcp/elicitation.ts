// Routes an `ask` decision of a call that arrived through createMcpServer() back to the MCP
// client that made the call, as an elicitation request. Calls are keyed by their root call id,
// which the server mints per request, so Code Mode sub-calls find their run_code's client.
import { type Context, Service } from 'cordis'
import type { ApprovalOutcome, ApprovalRequest, ApprovalService } from '../contract/execution.js'

/** Asks one MCP client about one call. */
export type ElicitApproval = (request: ApprovalRequest) => Promise<ApprovalOutcome>

const installed = new WeakSet<object>()
const routes = new Map<string, ElicitApproval>()

/** Route approvals of the call tree rooted at `rootCallId` to `ask` until the returned function runs. */
export function routeApprovals(rootCallId: string, ask: ElicitApproval): () => void {
  routes.set(rootCallId, ask)
  return () => {
    if (routes.get(rootCallId) === ask) routes.delete(rootCallId)
  }
}

/** The root call id of a request, whichever shape of ApprovalRequest the core hands over. */
function rootCallIdOf(request: ApprovalRequest): string | undefined {
  const r = request as unknown as { rootCallId?: unknown; execution?: { rootCallId?: unknown } }
  const id = r.rootCallId ?? r.execution?.rootCallId
  return typeof id === 'string' ? id : undefined
}

/**
 * The `approval` service createMcpServer() installs when the host has none: a call that came in
 * through an MCP server is asked of that server's client; anything else is denied.
 */
export class McpElicitationApproval extends Service implements ApprovalService {
  constructor(ctx: Context) {
    super(ctx, 'approval')
    ctx.effect(() => () => installed.delete(ctx.root))
  }

  async request(request: ApprovalRequest): Promise<ApprovalOutcome> {
    const root = rootCallIdOf(request)
    const ask = root === undefined ? undefined : routes.get(root)
    if (ask === undefined)
      return { kind: 'denied', reason: 'the call did not come from an MCP client that can be asked' }
    try {
      return await ask(request)
    } catch (error) {
      return {
        kind: 'denied',
        reason: `asking the MCP client failed: ${error instanceof Error ? error.message : String(error)}`,
      }
    }
  }
}

/** Install {@link McpElicitationApproval} once per app, unless the host provides its own approval service. */
export function ensureElicitationApproval(ctx: Context): void {
  if (ctx.get('approval', false) !== undefined || installed.has(ctx.root)) return
  installed.add(ctx.root)
  ctx.plugin(McpElicitationApproval)
}
