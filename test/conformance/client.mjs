// The client the conformance suite's client scenarios drive (`conformance client --command ...`):
// toolgate's connectMcpServer. The suite passes the server URL as the last argument, the scenario
// in MCP_CONFORMANCE_SCENARIO and, for the auth scenarios, credentials in MCP_CONFORMANCE_CONTEXT.
// It imports the built package by its name, as a user's program would (build-once builds dist/).
import { createToolRuntime } from 'toolgate'
import { connectMcpServer, createMcpOAuthProvider } from 'toolgate/mcp'

const url = process.argv[process.argv.length - 1]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}')

/** The grant the scenario's credentials call for; undefined when it gives none. */
function oauth() {
  const clientId = context.client_id
  if (clientId === undefined) return undefined
  if (context.private_key_pem !== undefined)
    return {
      grant: 'client_credentials',
      clientId,
      privateKey: { key: context.private_key_pem, algorithm: context.signing_algorithm ?? 'ES256' },
    }
  if (context.client_secret !== undefined)
    return { grant: 'client_credentials', clientId, clientSecret: context.client_secret }
  return undefined
}

/** What each scenario's server expects the client to call, with which arguments. */
const CALLS = {
  tools_call: ['add_numbers', { a: 5, b: 3 }],
  'elicitation-sep1034-client-defaults': ['test_client_elicitation_defaults', {}],
  'sse-retry': ['test_reconnection', {}],
}

async function main() {
  const { ctx, tools } = await createToolRuntime()
  const grant = oauth()
  const connection = await connectMcpServer(
    ctx,
    { url, ...(grant ? { authProvider: createMcpOAuthProvider(grant) } : {}) },
    {
      name: 'conformance',
      // Accept with nothing filled in: connectMcpServer fills in the requested schema's defaults.
      elicitation: async () => ({ action: 'accept', content: {} }),
    },
  )
  const call = CALLS[scenario]
  if (call) {
    const [name, args] = call
    const result = await tools.execute({ callId: 'c1', name, arguments: args, signal: new AbortController().signal })
    if (result.isError) throw new Error(`${name} failed: ${result.error?.message ?? JSON.stringify(result.value)}`)
    console.log(JSON.stringify(result.value))
  }
  await connection.close()
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error))
    process.exit(1)
  },
)
