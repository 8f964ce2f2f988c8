// What a tool call from an MCP 2026-07-28 client carries down to the upstream link that runs it:
// the capabilities the client declared, the answers and upstream state its retry brought, and, on
// the way back, the upstream's own input-required result or JSON-RPC error, to go to the client as
// they are. The 2026 face of `serve` runs each call inside one (an AsyncLocalStorage, so the
// pipeline between them needs no new parameter); a call without one is a 2025 client's.
// Upstream links also hear here when a 2026 client first needs them (they open their 2026 side
// then, lazily).
import { AsyncLocalStorage } from 'node:async_hooks'

/** An input-required answer of an upstream, as it sent it. */
export interface UpstreamInputRequired {
  readonly inputRequests: Record<string, unknown>
  /** The upstream's own `requestState`, opaque here. */
  readonly requestState?: string
}

/** A JSON-RPC error an upstream answered a 2026 client's call with, relayed as it is. */
export interface UpstreamRpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** One 2026 client's tool call, as the upstream link sees it. */
export interface ModernCall {
  /** What the client declared in its request's `_meta` envelope. */
  readonly clientCapabilities: Record<string, unknown>
  /** A retry's answer to an upstream question held in memory (a 2025 upstream's request), by its key. */
  readonly resume?: { readonly key: string; readonly inputResponses: Record<string, unknown> }
  /** The retry's answers and the upstream's state from the round before, to go back untouched. */
  readonly retry?: { readonly inputResponses: Record<string, unknown>; readonly requestState?: string }
  /** Set by the link: the upstream asks the client for input (the call ends this round). */
  inputRequired?: UpstreamInputRequired
  /** Set by the link: the upstream refused the call with a JSON-RPC error. */
  rpcError?: UpstreamRpcError
  /**
   * Set by the link when a 2025-only upstream asked (elicitation, sampling, roots) during the
   * call: the request, and the key under which the upstream's question now waits in memory.
   */
  held?: { readonly inputRequests: Record<string, unknown>; readonly key: string }
}

const calls = new AsyncLocalStorage<ModernCall>()

/** Runs `body` as a 2026 client's call. */
export function runModernCall<T>(call: ModernCall, body: () => Promise<T>): Promise<T> {
  return calls.run(call, body)
}

/** The 2026 client's call running here, if any. */
export function modernCall(): ModernCall | undefined {
  return calls.getStore()
}

type EraListener = () => Promise<void>
const listeners = new Set<EraListener>()

/** Called (awaited) before a 2026 client's first listing or call; returns how to stop. */
export function onModernDemand(listener: EraListener): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** Every upstream link ready for 2026 clients (its 2026 side open and listed, where it has one). */
export async function modernDemand(): Promise<void> {
  if (listeners.size === 0) return
  await Promise.all([...listeners].map((listener) => listener().catch(() => {})))
}
