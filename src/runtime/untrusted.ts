import { types } from 'node:util'

/**
 * Defensive reads of values the pipeline receives from outside (thrown values, listener returns,
 * the input object). Every read is one own-property lookup in a try/catch: a getter or Proxy trap
 * runs at most once per field and its throw never escapes, and nothing is stringified without a
 * guard. Captured at load so later tampering with globals cannot redirect them.
 */

const getOwn = Reflect.getOwnPropertyDescriptor
const getProto = Reflect.getPrototypeOf
const { isNativeError, isProxy } = types
const ErrorProto = Error.prototype
const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get as (
  this: AbortSignal,
) => boolean
const reasonGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'reason')?.get as (
  this: AbortSignal,
) => unknown

/** What a read that threw (or met a revoked Proxy) yields. */
export const UNREADABLE: unique symbol = Symbol('unreadable')
/** One own-property read: a data value, or the getter's answer (run once), or {@link UNREADABLE}. */
export function readOwn(target: object, key: PropertyKey): unknown {
  try {
    const desc = getOwn(target, key)
    if (desc === undefined) return undefined
    if ('value' in desc) return desc.value
    return desc.get === undefined ? undefined : Reflect.apply(desc.get, target, [])
  } catch {
    return UNREADABLE
  }
}

/**
 * An inherited read done as own-property reads up the prototype chain (bounded): for fields such
 * as `Error#name` that normally live on a prototype. The first level that has the key answers.
 */
export function readInherited(target: object, key: PropertyKey): unknown {
  let level: object | null = target
  try {
    for (let hops = 0; level !== null && hops < 32; hops++) {
      const desc = getOwn(level, key)
      if (desc !== undefined) {
        if ('value' in desc) return desc.value
        return desc.get === undefined ? undefined : Reflect.apply(desc.get, target, [])
      }
      level = getProto(level)
    }
    return undefined
  } catch {
    return UNREADABLE
  }
}

/** Whether `value` is a genuine AbortSignal (brand check through the captured getter; no user code). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null || isProxy(value)) return false
  try {
    abortedGetter.call(value as AbortSignal)
    return true
  } catch {
    return false
  }
}

/** `signal.aborted` of a genuine AbortSignal, immune to an own `aborted` property planted on it. */
export function abortedOf(signal: AbortSignal): boolean {
  return abortedGetter.call(signal)
}

/** `signal.reason` of a genuine AbortSignal, read the same way. */
export function reasonOf(signal: AbortSignal): unknown {
  return reasonGetter.call(signal)
}

/** Whether a thrown value is an Error (native brand, or Error.prototype on its chain), without throwing. */
function isErrorLike(value: object): boolean | typeof UNREADABLE {
  if (isNativeError(value)) return true
  try {
    let level: object | null = getProto(value)
    for (let hops = 0; level !== null && hops < 32; hops++) {
      if (level === ErrorProto) return true
      level = getProto(level)
    }
    return false
  } catch {
    return UNREADABLE
  }
}

const MAX_DESCRIBED = 4096

function clip(text: string): string {
  return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}… (${text.length} characters)` : text
}

/**
 * Text for an untrusted non-Error value in a message: strings as-is, everything else through
 * JSON.stringify then String, each guarded; `undefined` when neither works.
 */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'object' && value !== null && isProxy(value)) return 'a Proxy object (not inspected)'
  try {
    const json = JSON.stringify(value)
    if (typeof json === 'string') return json
  } catch {}
  try {
    const text = String(value)
    if (typeof text === 'string') return text
  } catch {}
  return undefined
}

/** Text for any untrusted value (a listener's malformed return) in a message, clipped; never throws. */
export function describeValue(value: unknown): string {
  const text = textOf(value)
  return text === undefined ? `an unreadable ${typeof value} (converting it to text threw)` : clip(text)
}

/** What the pipeline keeps of a thrown value: each field read exactly once. */
export interface ThrownReading {
  readonly message: string
  readonly name: string
  /** The value's own string `code`, if it had one. */
  readonly code: string | undefined
}

const UNREADABLE_MESSAGE = 'a value was thrown that could not be read'

/**
 * Read a thrown value once, defensively. An Error whose `message`/`name` cannot be read, a revoked
 * Proxy, or anything whose text conversion throws becomes a generic reading that says so.
 */
export function readThrown(thrown: unknown): ThrownReading {
  if (typeof thrown === 'string') return { message: thrown, name: 'string', code: undefined }
  if (typeof thrown !== 'object' || thrown === null) {
    const text = textOf(thrown)
    return text === undefined
      ? { message: `${UNREADABLE_MESSAGE} (a ${typeof thrown})`, name: 'Error', code: undefined }
      : { message: text, name: typeof thrown, code: undefined }
  }
  if (isProxy(thrown)) {
    return { message: `${UNREADABLE_MESSAGE} (a Proxy, which is not inspected)`, name: 'Error', code: undefined }
  }
  const errorLike = isErrorLike(thrown)
  if (errorLike === UNREADABLE) return { message: `${UNREADABLE_MESSAGE}`, name: 'Error', code: undefined }
  if (!errorLike) {
    const text = textOf(thrown)
    return text === undefined
      ? { message: `${UNREADABLE_MESSAGE} (an object whose conversion to text threw)`, name: 'Error', code: undefined }
      : { message: text, name: 'object', code: undefined }
  }
  const message = readInherited(thrown, 'message')
  const name = readInherited(thrown, 'name')
  const code = readInherited(thrown, 'code')
  const safeName = typeof name === 'string' && name !== '' ? name : 'Error'
  const ownCode = typeof code === 'string' ? code : undefined
  if (message === UNREADABLE || name === UNREADABLE) {
    const field = message === UNREADABLE ? 'message' : 'name'
    return { message: `${UNREADABLE_MESSAGE}: an Error whose ${field} threw when read`, name: safeName, code: ownCode }
  }
  const text = typeof message === 'string' || message === undefined ? message : textOf(message)
  return { message: text || safeName, name: safeName, code: ownCode }
}

/**
 * Log a contained listener failure without handing the logger the thrown value itself: its
 * formatter would stringify it, and a hostile value must not throw out of the containment.
 */
export function warnContained(
  core: { readonly logger: { warn(...args: unknown[]): void } },
  what: string,
  error: unknown,
): void {
  try {
    const errors = error instanceof AggregateError && Array.isArray(error.errors) ? error.errors : [error]
    core.logger.warn('%s: %s', what, errors.map((each: unknown) => readThrown(each).message).join('; '))
  } catch {}
}
