// The runtime core's one entry: every other folder imports the runtime through this file (a test
// checks it). What is here is what a feature needs: the service, agents, the host API beside
// `tools.execute`, the error classes, and the few helpers policies share with the pipeline.

// --- The service, agents and the host API features plug in through ------------------------------
export { type AgentHandle, createAgent } from './agent.js'
// --- Helpers a policy or feature shares with the pipeline ----------------------------------------
export { normalizeApprovalOutcome } from './approval-flow.js'
export { snapshotContent } from './content-check.js'
export { ToolRegistrationError } from './definition-check.js'
export { directListener } from './direct-listener.js'

// --- Errors the pipeline produces, and registration refusals -------------------------------------
export * from './errors.js'
export type { CallPausing, ToolHost } from './host.js'
export type { ToolHider } from './scope.js'
export { ToolRuntimeCore, type ToolRuntimeCoreConfig } from './service.js'
export { type FusedSignal, followSignal, fuseSignals } from './signal-fusion.js'
export type { ToolTransport } from './transport.js'
