// What the host hands one call beside its input: an approver for that call only, and a callback for
// a suspended approval. Run: npx tsx examples/host-options.ts
// #region host-options
import { createToolRuntime, defineTool } from 'toolgate'

const { tools, dispose } = await createToolRuntime()
tools.register(
  defineTool({
    name: 'transfer',
    description: 'Move money between accounts.',
    parameters: { amount: { type: 'integer', required: true } },
    output: { schema: { type: 'string' }, render: (_args, text) => [{ type: 'text', text }] },
    needsApproval: true,
    execute: async ({ amount }) => `moved ${amount}`,
  }),
)
const signal = new AbortController().signal

// This call's approver: it sees the plain request and answers for this call (and its sub-calls) only.
const approved = await tools.execute(
  { callId: 'c1', name: 'transfer', arguments: { amount: 10 }, signal },
  { approval: { request: async (request) => ({ kind: request.arguments ? 'allowed-once' : 'denied' }) } },
)
console.log('c1:', approved.isError ? approved.error.info?.code : approved.value)

// An approver that parks the call: onSuspended receives the request to store and decide later.
const parked = await tools.execute(
  { callId: 'c2', name: 'transfer', arguments: { amount: 99 }, signal },
  {
    approval: { request: async () => ({ kind: 'suspended', reason: 'a person decides tomorrow' }) },
    onSuspended: (request) => console.log('waiting:', JSON.stringify(request)),
  },
)
console.log('c2:', parked.isError ? parked.error.info?.code : parked.value)

// The next day: the decision goes to the same call id, and is used by that call alone.
const resumed = await tools.execute(
  { callId: 'c2', name: 'transfer', arguments: { amount: 99 }, signal },
  { decision: { kind: 'allowed-once' } },
)
console.log('c2 resumed:', resumed.isError ? resumed.error.info?.code : resumed.value)
// #endregion host-options
await dispose()
