// Issue 23 item 1: a gateway with one client for its whole life (toolgate serve over stdio) gives
// its upstreams only the relay handlers that client can answer, so each upstream is declared
// exactly the client's capabilities: sampling (with tools only when the client takes them),
// elicitation in the client's modes (a bare `elicitation: {}` is form mode, per MCP 2025-11-25),
// roots (always with listChanged: the gateway announces its client's arrival to upstreams that
// asked for the roots before the client's session existed).
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { declaredCapabilities } from '../../src/mcp/client/capabilities.js'
import { createMcpRelay, McpClientDirectory } from '../../src/mcp/index.js'
import { handlersForClient } from '../../src/mcp/relay/relay-capabilities.js'

const { handlers } = createMcpRelay(new McpClientDirectory())
const upstreamSees = (client: ClientCapabilities) => declaredCapabilities(handlersForClient(handlers, client))

describe('handlersForClient: the upstream is declared what the one client declared', () => {
  it('nothing for a client that declares nothing (also ignoring what the relay does not carry)', () => {
    expect(upstreamSees({})).toEqual({})
    expect(upstreamSees({ experimental: { x: {} }, tasks: {} })).toEqual({})
  })

  it('each elicitation mode as declared; a bare elicitation is form mode only', () => {
    expect(upstreamSees({ elicitation: {} })).toEqual({ elicitation: { form: {} } })
    expect(upstreamSees({ elicitation: { form: {} } })).toEqual({ elicitation: { form: {} } })
    expect(upstreamSees({ elicitation: { url: {} } })).toEqual({ elicitation: { url: {} } })
    expect(upstreamSees({ elicitation: { form: {}, url: {} } })).toEqual({ elicitation: { form: {}, url: {} } })
  })

  it('sampling with tools only when the client takes them', () => {
    expect(upstreamSees({ sampling: {} })).toEqual({ sampling: {} })
    expect(upstreamSees({ sampling: { tools: {} } })).toEqual({ sampling: { tools: {} } })
    // Marking one selection does not mark the relay's own handler for the next.
    expect(upstreamSees({ sampling: {} })).toEqual({ sampling: {} })
    expect(declaredCapabilities(handlers).sampling).toEqual({})
  })

  it('roots with listChanged, which the gateway sends when its client arrives', () => {
    expect(upstreamSees({ roots: {} })).toEqual({ roots: { listChanged: true } })
    expect(upstreamSees({ roots: { listChanged: false } })).toEqual({ roots: { listChanged: true } })
    expect(upstreamSees({ roots: { listChanged: true } })).toEqual({ roots: { listChanged: true } })
    expect(declaredCapabilities(handlers).roots).toEqual({ listChanged: true })
  })

  it('everything together', () => {
    expect(upstreamSees({ sampling: { tools: {} }, elicitation: { url: {} }, roots: { listChanged: true } })).toEqual({
      sampling: { tools: {} },
      elicitation: { url: {} },
      roots: { listChanged: true },
    })
  })
})
