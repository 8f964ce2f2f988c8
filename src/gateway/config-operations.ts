// The config keys an operator of `serve --http` sets for monitoring: which upstreams readiness
// waits for (`"required": true` on a server entry) and what the metrics may label (`metrics`).
import { isRecord } from '../util/is-record.js'

/** The config's `metrics`. */
export interface MetricsConfig {
  /**
   * Label each call's metrics with the caller's subject (`identity`). Off by default: an identity
   * is personal data, and one series per caller grows without bound.
   */
  identityLabel?: boolean
}

/** A server entry's `required`: true, false or absent; anything else is an issue at `at.required`. */
export function checkRequired(value: unknown, at: string, issues: string[]): boolean | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'boolean') return value
  issues.push(`${at}.required: expected true or false, got ${JSON.stringify(value)}`)
  return undefined
}

/** The config's `metrics`, each issue with its path. */
export function checkMetricsConfig(value: unknown, issues: string[]): MetricsConfig {
  const metrics: MetricsConfig = {}
  if (!isRecord(value)) {
    issues.push('metrics: expected an object { identityLabel? }')
    return metrics
  }
  for (const key of Object.keys(value))
    if (key !== 'identityLabel') issues.push(`metrics.${key}: unknown key (expected "identityLabel")`)
  if (value.identityLabel !== undefined) {
    if (typeof value.identityLabel === 'boolean') metrics.identityLabel = value.identityLabel
    else issues.push(`metrics.identityLabel: expected true or false, got ${JSON.stringify(value.identityLabel)}`)
  }
  return metrics
}
