// Sealing a suspended turn's state: an HMAC-SHA256, under a key the program holds, over a
// canonical serialization, so a state that was edited anywhere after it was sealed is refused.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ConfigError } from '../errors/config-error.js'

/** A key for `stateKey`: at least 16 bytes (32 random bytes recommended). */
export type StateKey = string | Uint8Array

export const MIN_STATE_KEY_BYTES = 16

const PREFIX = 'hmac-sha256:'
/** Keeps a seal of a state apart from an HMAC the same key might make over anything else. */
const DOMAIN = 'toolgate turn state v1\n'

/** The key's bytes, or a TypeError naming `where` when it is not a usable key. */
export function stateKeyBytes(key: unknown, where: string): Uint8Array {
  let bytes: Buffer
  if (typeof key === 'string') bytes = Buffer.from(key, 'utf8')
  else if (key instanceof Uint8Array) bytes = Buffer.from(key)
  else throw new ConfigError(where, 'expected a string or bytes (a Uint8Array)')
  if (bytes.length < MIN_STATE_KEY_BYTES)
    throw new ConfigError(where, `expected at least ${MIN_STATE_KEY_BYTES} bytes, got ${bytes.length}`)
  return bytes
}

/**
 * JSON with every object's keys sorted and no whitespace: the same state always gives the same
 * text, wherever it was stored and however a tool pretty-printed it. Walks with its own stack, so
 * any depth the state could be stored at can be sealed and checked.
 */
export function canonicalJson(root: unknown): string {
  const out: string[] = []
  // Work items, taken from the end: a value still to write, or text written as is.
  const work: ({ readonly text: string } | { readonly value: unknown })[] = [{ value: root }]
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    if ('text' in item) {
      out.push(item.text)
      continue
    }
    const value = item.value
    if (value === null || typeof value !== 'object') {
      out.push(JSON.stringify(value) ?? 'null')
    } else if (Array.isArray(value)) {
      out.push('[')
      work.push({ text: ']' })
      for (let i = value.length - 1; i >= 0; i--) {
        work.push({ value: value[i] })
        if (i > 0) work.push({ text: ',' })
      }
    } else {
      const record = value as Record<string, unknown>
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort()
      out.push('{')
      work.push({ text: '}' })
      for (let i = keys.length - 1; i >= 0; i--) {
        work.push({ value: record[keys[i]] })
        work.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` })
      }
    }
  }
  return out.join('')
}

/** The seal of `state` (its `seal` member left out) under `key`. */
export function stateSeal(state: Record<string, unknown>, key: Uint8Array): string {
  const { seal: _ignored, ...rest } = state
  const mac = createHmac('sha256', key).update(DOMAIN).update(canonicalJson(rest)).digest('base64url')
  return `${PREFIX}${mac}`
}

/** Whether `state.seal` is the seal of the rest of `state` under `key` (compared in constant time). */
export function sealVerifies(state: Record<string, unknown>, key: Uint8Array): boolean {
  const seal = state.seal
  if (typeof seal !== 'string' || !seal.startsWith(PREFIX)) return false
  const expected = Buffer.from(stateSeal(state, key))
  const given = Buffer.from(seal)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
