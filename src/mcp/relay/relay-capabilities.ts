// Which of a relay's handlers a gateway gives its upstreams when it has exactly one client for its
// whole life: only those the client can answer, so each upstream is declared exactly the
// capabilities that client declared, and offers no tool that would need one it lacks.

import { samplingWithTools } from '../client/capabilities.js'
import type { McpCapabilityHandlers } from '../protocol/capability-handlers.js'
import type { ClientCapabilities } from '../protocol/wire-types.js'

/**
 * The subset of `handlers` matching `capabilities` (the client's own `initialize`): sampling (with
 * tools when the client takes them), elicitation in the modes the client declared (a bare
 * `elicitation: {}` is form mode), and roots.
 */
export function handlersForClient(
  handlers: Required<McpCapabilityHandlers>,
  capabilities: ClientCapabilities,
): McpCapabilityHandlers {
  const selected: {
    -readonly [K in keyof McpCapabilityHandlers]: McpCapabilityHandlers[K]
  } = {}
  const { elicitation, sampling, roots } = capabilities
  if (elicitation !== undefined) {
    const form = elicitation.form !== undefined
    const url = elicitation.url !== undefined
    if (form || !url) selected.elicitation = handlers.elicitation
    if (url) selected.urlElicitation = handlers.urlElicitation
  }
  if (sampling !== undefined)
    selected.sampling = sampling.tools !== undefined ? samplingWithTools(handlers.sampling) : handlers.sampling
  // Declared with listChanged whatever the client said: the gateway itself tells the upstreams when
  // its client arrives, since they may ask for the roots before its session exists.
  if (roots !== undefined) selected.roots = handlers.roots
  return selected
}
