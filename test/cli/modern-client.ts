// A v2 SDK client pinned to MCP 2026-07-28: over HTTP one that answers input-required results
// itself, so a test sees each round of a call (the input it asks, the sealed requestState, the final
// result); over stdio one that spawns the built CLI's `serve` and answers toolgate's asks itself.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { BIN } from './helpers.js'

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

/** How a v2 client picks its era: pinned to one revision, `auto`, or `legacy`. */
export type EraMode = { pin: string } | 'auto' | 'legacy'

/** An answer to toolgate's elicitation/create (an approval ask). */
export type AskAnswer = { action: string; content?: Record<string, unknown> }

export interface StdioClientOptions {
  /** The era (default: pinned to 2026-07-28). */
  readonly mode?: EraMode
  /** Answers each ask; without it the client declares no elicitation and cannot be asked. */
  readonly answer?: (params: { message: string }) => AskAnswer
  /** The serve process's whole environment (default: the test's). */
  readonly env?: Record<string, string>
  /** Each chunk of what the serve process writes to stderr. */
  readonly onStderr?: (text: string) => void
}

/** A v2 client of `toolgate serve ...serveArgs` over stdio, the built CLI its child. */
export async function modernStdioClient(serveArgs: string[], options: StdioClientOptions = {}): Promise<Client> {
  const { mode = { pin: '2026-07-28' }, answer, env, onStderr } = options
  const client = new Client(
    { name: 'modern-stdio-client', version: '1.0.0' },
    { versionNegotiation: { mode }, capabilities: answer ? { elicitation: { form: {} } } : {} },
  )
  if (answer)
    client.setRequestHandler('elicitation/create', async (request) => answer(request.params as never) as never)
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', ...serveArgs],
    ...(env ? { env } : {}),
    stderr: 'pipe',
  })
  if (onStderr) transport.stderr?.on('data', (chunk: Buffer) => onStderr(chunk.toString()))
  await client.connect(transport)
  return client
}
