/**
 * Recipe: ask before a tool runs (docs/guide/recipes/add-approval.md).
 *
 *   npx tsx examples/add-approval.ts
 */
import { createAgent, createToolRuntime, defineTool } from 'toolgate'

// #region tools
const deleteFile = defineTool({
  name: 'delete_file',
  description: 'Delete a file.',
  parameters: { path: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, path) => [{ type: 'text', text: `deleted ${path}` }] },
  // Ask for every call outside tmp/; the string is the reason the approver is shown.
  needsApproval: ({ path }) => (path.startsWith('tmp/') ? false : `deletes ${path}, outside tmp/`),
  execute: async ({ path }) => path,
})

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy the site.',
  parameters: { env: { type: 'string', enum: ['staging', 'production'], required: true } },
  output: { schema: { type: 'string' }, render: (_args, env) => [{ type: 'text', text: `deployed to ${env}` }] },
  needsApproval: true,
  execute: async ({ env }) => env,
})
// #endregion tools

// #region approval
await using runtime = await createToolRuntime({
  // The request is plain JSON: callId, rootCallId, parentCallId, agentId, toolName, arguments, reason.
  approval: (request) => {
    console.log(`  asked: ${request.toolName} ${JSON.stringify(request.arguments)} (${request.reason ?? 'no reason'})`)
    if (request.toolName === 'delete_file') return { kind: 'denied', reason: 'nothing is deleted today' }
    // Allow staging for good: later asks of this agent for `deploy` are answered without asking.
    if (request.toolName === 'deploy' && (request.arguments as { env: string }).env === 'staging')
      return { kind: 'allowed-always' }
    return { kind: 'allowed-once', arguments: { env: 'staging' } } // allow, with edited arguments
  },
})
// #endregion approval

const { ctx, tools } = runtime
tools.register(deleteFile)
tools.register(deploy)
const agent = createAgent(ctx, { id: 'ops' })

// #region calls
const calls = [
  { name: 'delete_file', arguments: { path: 'tmp/cache.json' } }, // not asked
  { name: 'delete_file', arguments: { path: 'src/index.ts' } }, // asked, denied
  { name: 'deploy', arguments: { env: 'production' } }, // asked, allowed with env edited to staging
  { name: 'deploy', arguments: { env: 'staging' } }, // asked, allowed always
  { name: 'deploy', arguments: { env: 'staging' } }, // answered by the standing rule, not asked
]
for (const [i, call] of calls.entries()) {
  console.log(`${call.name} ${JSON.stringify(call.arguments)}`)
  const result = await tools.execute({ callId: `call-${i}`, agent, ...call, signal: AbortSignal.timeout(60_000) })
  console.log(`  -> ${result.isError ? `${result.error.info?.code}: ${result.error.message}` : result.value}`)
}
console.log(`standing rules: ${tools.standingApprovals(agent).map((rule) => `${rule.toolName} ${rule.kind}`)}`)
// #endregion calls
