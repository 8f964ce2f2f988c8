// A store's standing approvals as the runtime's standing-rule store: an `-always` answer given on one
// instance is kept in the store, and every instance (and every later process) reads it from there.
import type { StandingApprovalStore } from '../contract/execution.js'
import { ConfigError } from '../errors/config-error.js'
import type { Store } from './store.js'

/**
 * The standing approvals of `store`, for `tools.host.installStandingStore`. Rules are looked up on
 * each ask (not cached), so a rule revoked in the store stops answering on every instance at once.
 */
export function standingApprovalsIn(store: Store): StandingApprovalStore {
  if (store === null || typeof store !== 'object' || typeof store.standingApprovals !== 'function')
    throw new ConfigError('standingApprovalsIn(store)', 'expected a Store (createFileStore, createPostgresStore)')
  return Object.freeze({
    async find(agentId: string | null, toolName: string) {
      const rule = (await store.standingApprovals(agentId)).find((r) => r.toolName === toolName)
      return rule === undefined ? undefined : { kind: rule.kind }
    },
    async keep(rule: { agentId: string | null; toolName: string; kind: 'allowed-always' | 'denied-always' }) {
      await store.setStandingApproval({ agentId: rule.agentId, toolName: rule.toolName, kind: rule.kind })
    },
  })
}
