// A v2 SDK client pinned to MCP 2026-07-28 that answers input-required results itself, so a test
// sees each round of a call (the input it asks, the sealed requestState, the final result).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

/** A 2026-07-28 client of `url` that declares form elicitation and does not fulfil input requests. */
export async function modernClient(url: string): Promise<Client> {
  const client = new Client({ name: 'modern-client', version: '1.0.0' }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    inputRequired: { autoFulfill: false },
  } as never)
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

/** One round of a tools/call: an input-required result or the final one. */
export type Round = {
  resultType?: string
  inputRequests?: Record<string, { method: string; params: { message?: string } }>
  requestState?: string
  content?: { type: string; text?: string }[]
  isError?: boolean
}

/** One tools/call round (`params` may carry `inputResponses` and `requestState` of a retry). */
export const callRound = (client: Client, params: Record<string, unknown>): Promise<Round> =>
  client.callTool(params as never, { allowInputRequired: true } as never) as Promise<Round>

/** A round's text blocks, joined. */
export const roundText = (round: Round) => round.content?.map((block) => block.text).join('') ?? ''
