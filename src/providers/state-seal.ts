// Sealing a suspended turn's state: an HMAC-SHA256, under a key the program holds, over a
// canonical serialization, so a state that was edited anywhere after it was sealed is refused.
import { createHmac, timingSafeEqual } from 'node:crypto'

/** A key for `stateKey`: at least {@link MIN_STATE_KEY_BYTES} bytes (32 random bytes recommended). */
export type StateKey = string | Uint8Array

export const MIN_STATE_KEY_BYTES = 16

const PREFIX = 'hmac-sha256:'
/** Keeps a seal of a state apart from an HMAC the same key might make over anything else. */
const DOMAIN = 'toolgate turn state v1\n'

/** The key's bytes, or a TypeError naming `where` when it is not a usable key. */
export function stateKeyBytes(key: unknown, where: string): Buffer {
  let bytes: Buffer
  if (typeof key === 'string') bytes = Buffer.from(key, 'utf8')
  else if (key instanceof Uint8Array) bytes = Buffer.from(key)
  else throw new TypeError(`${where} must be a string or bytes (a Uint8Array)`)
  if (bytes.length < MIN_STATE_KEY_BYTES)
    throw new TypeError(`${where} must be at least ${MIN_STATE_KEY_BYTES} bytes long, got ${bytes.length}`)
  return bytes
}

/**
 * JSON with every object's keys sorted and no whitespace: the same state always gives the same
 * text, wherever it was stored and however a tool pretty-printed it. Throws a RangeError for a
 * value nested too deeply to walk.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`
  const record = value as Record<string, unknown>
  const parts: string[] = []
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue
    parts.push(`${JSON.stringify(key)}:${canonicalJson(record[key])}`)
  }
  return `{${parts.join(',')}}`
}

/** The seal of `state` (its `seal` member left out) under `key`. */
export function stateSeal(state: Record<string, unknown>, key: Buffer): string {
  const { seal: _ignored, ...rest } = state
  const mac = createHmac('sha256', key).update(DOMAIN).update(canonicalJson(rest)).digest('base64url')
  return `${PREFIX}${mac}`
}

/** Whether `state.seal` is the seal of the rest of `state` under `key` (compared in constant time). */
export function sealVerifies(state: Record<string, unknown>, key: Buffer): boolean {
  const seal = state.seal
  if (typeof seal !== 'string' || !seal.startsWith(PREFIX)) return false
  const expected = Buffer.from(stateSeal(state, key))
  const given = Buffer.from(seal)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
