// Standing approvals of a serve without a shared store, kept by agent id and tool name beside the
// identity scopes rather than in them: a scope dropped from the bounded identity cache and made
// again later still finds its caller's "always" answers. Bounded too; a rule dropped past the bound
// only means the next call is asked again.
import type { StandingApprovalRule, StandingApprovalStore } from '../contract/execution.js'

/** How many standing rules are kept at most (least recently used dropped first). */
export const MAX_MEMORY_STANDING_RULES = 100_000

/** A standing approval store in this process's memory, for `tools.host.installStandingStore`. */
export function memoryStandingApprovals(max = MAX_MEMORY_STANDING_RULES): StandingApprovalStore {
  const rules = new Map<string, Pick<StandingApprovalRule, 'kind' | 'reason'>>()
  const keyOf = (agentId: string | null, toolName: string) => JSON.stringify([agentId, toolName])
  return Object.freeze({
    async find(agentId: string | null, toolName: string) {
      const key = keyOf(agentId, toolName)
      const rule = rules.get(key)
      if (rule !== undefined) {
        rules.delete(key)
        rules.set(key, rule)
      }
      return rule
    },
    async keep(rule: StandingApprovalRule) {
      const key = keyOf(rule.agentId, rule.toolName)
      rules.delete(key)
      rules.set(key, { kind: rule.kind, reason: rule.reason })
      for (const oldest of rules.keys()) {
        if (rules.size <= max) break
        rules.delete(oldest)
      }
    },
  })
}
