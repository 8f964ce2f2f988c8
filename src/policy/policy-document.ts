// The policy document: the gateway config's `policy` object, which the library accepts as it is.
import type { ToolPresentationMode } from '../contract/execution.js'

/** A claim value a rule compares with: JSON scalars only (compared with `===`). */
export type ClaimValue = string | number | boolean | null

/**
 * Whom a rule is for. Every key given must match (and); a key's list matches when any entry does
 * (or). `claim` compares the token's claims: each named claim must equal one of the listed values,
 * or, when the claim is an array, contain one of them.
 */
export interface PolicyWho {
  subject?: string[]
  group?: string[]
  scope?: string[]
  claim?: Record<string, ClaimValue[]>
}

/** How many matching calls a rule lets through per window, and whose calls share a count. */
export interface PolicyQuota {
  /** Calls allowed per window (a positive integer). */
  calls: number
  /** The window: a fixed minute, hour or day (UTC), the count starting afresh at its start. */
  per: 'minute' | 'hour' | 'day'
  /**
   * Whose calls share a count: `subject` (each person, over all their tokens), `identity` (each
   * distinct subject, groups and scopes) or `global` (everyone together).
   */
  by: 'subject' | 'identity' | 'global'
}

/** One rule of `policy.rules`. */
export interface PolicyRule {
  /** A name the rule's decisions carry (in denials, `explain` and the journal) instead of its index. */
  id?: string
  /**
   * Whom the rule is for. Without `who` the rule is for everyone (with or without an identity); it
   * may then not `allow` or set a `mode`, since grants belong to identities or the top level.
   */
  who?: PolicyWho
  /** Tool-name globs this rule grants (the identity sees the union of the grants of its rules). */
  allow?: string[]
  /** Tool-name globs hidden and refused for this identity, whatever any rule allows. */
  deny?: string[]
  /** Tool-name globs whose calls by this identity need approval. */
  ask?: string[]
  /** Tool-name globs the rule's `when` and `quota` apply to without allowing, denying or asking. */
  tools?: string[]
  /** Cooperative deadline per tool-name glob for this identity's calls, in ms. */
  timeoutMs?: Record<string, number>
  /** How this identity sees the tools: native, code (only run_code) or both. */
  mode?: ToolPresentationMode
  /** A CEL expression over `tool`, `args`, `identity`, `call` and `turn`: the rule applies only when it is true. */
  when?: string
  /** A quota on the calls this rule matches. */
  quota?: PolicyQuota
  /** The text the model sees when this rule denies or asks. */
  reason?: string
}

/** The policy document. */
export interface PolicyDocument {
  /** Tool-name globs; when given, only matching tools are visible and callable. */
  allow?: string[]
  /** Tool-name globs hidden and refused. */
  deny?: string[]
  /** Tool-name globs whose calls need approval. */
  ask?: string[]
  /** Cooperative deadline per tool-name glob, in ms (the first matching glob wins). */
  timeoutMs?: Record<string, number>
  /** Rules per identity (`who`) or for everyone, each optionally conditional (`when`) or with a quota. */
  rules?: PolicyRule[]
}

/** Who calls, as a policy sees it: in the library an agent's, in the gateway the token's. */
export interface PolicyIdentity {
  readonly subject: string
  readonly groups?: readonly string[]
  readonly scopes?: readonly string[]
  readonly claims?: Readonly<Record<string, unknown>>
}

/** `who` as written: a single name stands for a list of one, a single claim value for a list of one. */
export interface PolicyWhoInput {
  subject?: string | string[]
  group?: string | string[]
  scope?: string | string[]
  claim?: Record<string, ClaimValue | ClaimValue[]>
}

/** A policy document as written (in a config file or a library call), before the check normalizes it. */
export interface PolicyInput extends Omit<PolicyDocument, 'rules'> {
  rules?: (Omit<PolicyRule, 'who'> & { who?: PolicyWhoInput })[]
}
