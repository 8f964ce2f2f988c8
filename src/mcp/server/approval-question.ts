// The question an `ask` puts to an MCP client's user, and how its answer reads as a decision: the
// same for a 2025 client (an elicitation request on the call's stream) and a 2026 client (an
// elicitation input request in an input-required result).
import type { ApprovalOutcome, ApprovalRequest } from '../../contract/execution.js'
import { previewJson } from '../../scheduling/preview.js'

/** The form-mode elicitation params asking whether `request`'s call may run. */
export function approvalQuestion(request: ApprovalRequest): {
  message: string
  requestedSchema: {
    type: 'object'
    properties: Record<string, { type: 'boolean'; title: string; default: boolean }>
    required: string[]
  }
} {
  const { toolName, reason } = request
  const message =
    `Allow the call to ${toolName}?${reason ? `\nReason asked: ${reason}` : ''}` +
    `\nArguments: ${previewJson(request.arguments, 1000)}`
  return {
    message,
    requestedSchema: {
      type: 'object',
      properties: {
        approve: { type: 'boolean', title: `Allow ${toolName} once`, default: false },
        // Optional: a client that only shows `approve` allows once, as before.
        always: {
          type: 'boolean',
          title: `Also allow every later call of ${toolName} (a standing approval)`,
          default: false,
        },
      },
      required: ['approve'],
    },
  }
}

/** The decision an elicitation answer gives; `client` (the authenticated caller) is who decided. */
export function approvalAnswer(
  answer: { action: string; content?: Record<string, unknown> },
  client: string | undefined,
): ApprovalOutcome {
  const by = client === undefined ? {} : { decidedBy: client }
  if (answer.action === 'accept' && answer.content?.approve === true)
    return { kind: answer.content.always === true ? 'allowed-always' : 'allowed-once', ...by }
  if (answer.action === 'cancel')
    return { kind: 'cancelled', reason: 'the MCP client cancelled the approval request', ...by }
  return { kind: 'denied', reason: 'the MCP client declined the call', ...by }
}
