import { types } from 'node:util'
import type { JsonValue } from '../contract/json-value.js'
import { JsonValueError } from './json-value-error.js'
import { appendIndex, appendKey } from './path.js'

// Captured once so later tampering with globals cannot redirect the walk into user code.
const { isProxy } = types
const ObjectProto = Object.prototype
const ArrayProto = Array.prototype
const getProto = Object.getPrototypeOf
const getOwn = Object.getOwnPropertyDescriptor
const hasOwn = Object.hasOwn
const ownKeys = Reflect.ownKeys
const ownNames = Object.getOwnPropertyNames
const ownSymbols = Object.getOwnPropertySymbols
const isEnumerable = Object.prototype.propertyIsEnumerable
const lookupGetter = (Object.prototype as unknown as { __lookupGetter__(this: object, k: PropertyKey): unknown })
  .__lookupGetter__
const isArray = Array.isArray
const freeze = Object.freeze
const defineProperty = Object.defineProperty
const createNull = Object.create as (proto: null) => Record<string, unknown>

/**
 * Every root `snapshotJsonValue` produced. Membership proves "detached, deep-frozen, lossless JSON", so
 * re-snapshotting (or validating) such a value — or a value that embeds one — skips its whole subtree.
 */
const snapshots = new WeakSet<object>()

/** Whether `value` is (a root of) a frozen snapshot produced by {@link snapshotJsonValue}. */
export function isFrozenSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && snapshots.has(value)
}

/**
 * Small walks find cycles by scanning the (short) stack and do no bookkeeping. Past this depth or
 * container count a walk switches to one Map: open containers map to IN_PROGRESS (a cycle check) and
 * finished ones to their copy (so shared-reference DAGs stay linear instead of exponential).
 */
const ANCESTOR_SCAN_LIMIT = 32
const MEMO_AFTER = 65_536
const IN_PROGRESS = Symbol('in progress')

const MODE_CHECK = 0
const MODE_SNAPSHOT = 1
const MODE_CLONE = 2
type Mode = typeof MODE_CHECK | typeof MODE_SNAPSHOT | typeof MODE_CLONE

/** A found problem: path of the offending member and why. */
export interface JsonIssue {
  readonly path: string
  readonly reason: string
}

// Walk state lives at module level: the explicit work stack is a set of parallel arrays (no per-node
// frame objects), and the walk never runs user code (proxies are rejected before any other operation,
// getters are never invoked, `toJSON` is never read), so it is not reentrant and can be reused.
const srcStack: object[] = []
const copyStack: (Record<string, unknown> | unknown[] | null)[] = []
const keyStack: (string[] | null)[] = []
const idxStack: number[] = []
const lenStack: number[] = []
let sp = 0
/** Deepest frame used by the current walk, so cleanup touches only the used slots. */
let high = 0
let containers = 0
let memo: Map<object, unknown> | null = null
let copying = false
let walkRoot = 'value'
let walkIssue: JsonIssue | undefined

/** Reason a primitive is not lossless JSON, or `undefined` when it is. */
export function primitiveProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      if (value - value !== 0) return `is ${value}, which is not JSON`
      if (value === 0 && 1 / value < 0) return 'is -0, which is not lossless JSON (it would become 0)'
      return undefined
    case 'undefined':
      return 'is undefined, which is not JSON'
    case 'function':
      return 'is a function, which is not JSON'
    case 'symbol':
      return 'is a symbol, which is not JSON'
    case 'bigint':
      return 'is a bigint, which is not JSON'
    default:
      return value === null ? undefined : 'is not JSON'
  }
}

/** Names an object's class for messages without running user code (no getters, no proxy traps). */
function describeForeign(proto: object): string {
  if (isProxy(proto)) return 'an object whose prototype is a Proxy'
  const ctor = getOwn(proto, 'constructor')
  if (ctor !== undefined && typeof ctor.value === 'function' && !isProxy(ctor.value)) {
    const name = getOwn(ctor.value, 'name')
    if (name !== undefined && typeof name.value === 'string' && name.value !== '') return `a ${name.value}`
  }
  return 'an object'
}

/**
 * Reason a container (object or array) itself is not JSON — a Proxy or a foreign prototype — or
 * `undefined`. Must be the first thing done to any object: `isProxy` runs no trap.
 */
export function containerProblem(value: object): string | undefined {
  if (isProxy(value)) return 'is a Proxy, which is not JSON'
  const proto = getProto(value)
  if (isArray(value)) {
    if (proto === ArrayProto) return undefined
    return `is an array with a foreign prototype (${describeForeign(proto)}), which is not JSON`
  }
  if (proto === ObjectProto || proto === null) return undefined
  return `is ${describeForeign(proto)} (prototype is neither Object.prototype nor null), which is not JSON`
}

/** Reason an own property descriptor is not a plain JSON data member, or `undefined`. */
export function descriptorProblem(desc: PropertyDescriptor): string | undefined {
  // Data descriptors always carry a boolean `writable`; accessors never do.
  if (desc.writable === undefined) return 'is an accessor property, which is not JSON (it was not invoked)'
  if (desc.enumerable !== true) return 'is a non-enumerable property, which is not JSON'
  return undefined
}

/**
 * The first own key of an array that is neither an index below its length nor `length`, if any.
 * Holes are not reported here (they are found per index).
 */
export function arrayExtraKey(value: unknown[]): string | symbol | undefined {
  const own = ownKeys(value)
  const len = value.length
  if (own.length === len + 1) return undefined
  for (let i = 0; i < own.length; i++) {
    const k = own[i]
    if (k === 'length') continue
    if (typeof k === 'symbol') return k
    const n = Number(k)
    if (String(n >>> 0) !== k || n >= len) return k
  }
  return undefined
}

/** Path of the member currently being visited at `depth` (frames 0..depth-1 contribute a segment each). */
function framePath(depth: number): string {
  let path = walkRoot
  for (let j = 0; j < depth; j++) {
    const keys = keyStack[j]
    const at = idxStack[j] - 1
    path = keys === null ? appendIndex(path, at) : appendKey(path, keys[at])
  }
  return path
}

function fail(depth: number, reason: string): undefined {
  walkIssue = { path: framePath(depth), reason }
  return undefined
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // `__proto__` must become an own data key, never a prototype switch.
  if (key === '__proto__') defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

/** Checks a container and pushes its frame; returns its copy (or itself) or `undefined` with `walkIssue` set. */
function open(value: object): unknown {
  const problem = containerProblem(value)
  if (problem !== undefined) return fail(sp, problem)
  if (memo !== null ? memo.get(value) === IN_PROGRESS : sp > 0 && srcStack.lastIndexOf(value, sp - 1) !== -1) {
    let j = 0
    while (srcStack[j] !== value) j++
    return fail(sp, `is a cycle back to ${framePath(j)}, which is not JSON`)
  }
  let keys: string[] | null
  let len: number
  let copy: Record<string, unknown> | unknown[] | null = null
  if (isArray(value)) {
    const extra = arrayExtraKey(value)
    if (extra !== undefined) {
      const shown = typeof extra === 'symbol' ? extra.toString() : JSON.stringify(extra)
      return fail(sp, `is an array with an extra property ${shown}, which is not JSON`)
    }
    keys = null
    len = value.length
    if (copying) copy = []
  } else {
    // getOwnPropertyNames hits V8's key cache (Reflect.ownKeys does not); symbols are checked apart.
    const symbols = ownSymbols(value)
    if (symbols.length > 0) return fail(sp, `has a symbol key ${symbols[0].toString()}, which is not JSON`)
    keys = ownNames(value)
    len = keys.length
    if (copying) copy = getProto(value) === null ? createNull(null) : {}
  }
  srcStack[sp] = value
  copyStack[sp] = copy
  keyStack[sp] = keys
  idxStack[sp] = 0
  lenStack[sp] = len
  sp++
  if (sp > high) high = sp
  if (memo !== null) memo.set(value, IN_PROGRESS)
  else if (sp > ANCESTOR_SCAN_LIMIT || ++containers > MEMO_AFTER) {
    memo = new Map()
    for (let j = 0; j < sp; j++) memo.set(srcStack[j], IN_PROGRESS)
  }
  return copying ? copy : value
}

function resetWalk(copy: boolean, rootPath: string): void {
  sp = 0
  containers = 0
  memo = null
  copying = copy
  walkRoot = rootPath
  walkIssue = undefined
}

/**
 * The one walk behind check/snapshot/clone. Root must be a non-null object. Returns the copy (or the
 * root in check mode); on failure returns `undefined` and leaves the problem in `walkIssue`.
 */
function walk(root: object, rootPath: string, mode: Mode): unknown {
  resetWalk(mode !== MODE_CHECK, rootPath)
  const freezing = mode === MODE_SNAPSHOT
  const trustSnapshots = mode !== MODE_CLONE
  try {
    const result = open(root)
    while (sp > 0) {
      const f = sp - 1
      const i = idxStack[f]
      const src = srcStack[f]
      if (i === lenStack[f]) {
        // Post-order: every child is complete, so freezing here freezes bottom-up in the same pass.
        const done = copyStack[f]
        if (freezing) freeze(done)
        if (memo !== null) memo.set(src, copying ? done : src)
        sp--
        continue
      }
      idxStack[f] = i + 1
      const keys = keyStack[f]
      let key: string | undefined
      let child: unknown
      if (keys === null) {
        // Arrays: two cheap probes beat getOwnPropertyDescriptor on indices (which is ~3x slower here).
        if (!isEnumerable.call(src, i)) {
          return fail(
            sp,
            hasOwn(src, i)
              ? 'is a non-enumerable property, which is not JSON'
              : 'is a hole in a sparse array, which is not JSON',
          )
        }
        if (lookupGetter.call(src, i) !== undefined)
          return fail(sp, 'is an accessor property, which is not JSON (it was not invoked)')
        child = (src as unknown[])[i]
        // A setter-only accessor reads as undefined without running code; name it precisely.
        if (child === undefined)
          return fail(sp, descriptorProblem(getOwn(src, i)!) ?? 'is undefined, which is not JSON')
      } else {
        key = keys[i]
        const desc = getOwn(src, key)!
        const bad = descriptorProblem(desc)
        if (bad !== undefined) return fail(sp, bad)
        child = desc.value
      }
      if (typeof child === 'object' && child !== null) {
        if (trustSnapshots && snapshots.has(child)) {
          // Already detached, frozen and proven JSON: embed as-is, skip the subtree.
        } else {
          const seen = memo !== null ? memo.get(child) : undefined
          if (seen !== undefined && seen !== IN_PROGRESS) child = seen
          else {
            child = open(child)
            if (walkIssue !== undefined) return undefined
          }
        }
      } else {
        const problem = primitiveProblem(child)
        if (problem !== undefined) return fail(sp, problem)
      }
      if (copying) {
        const target = copyStack[f]!
        if (key === undefined) (target as unknown[])[i] = child
        else setOwn(target as Record<string, unknown>, key, child)
      }
    }
    return result
  } finally {
    // Drop references so the reusable stacks do not retain user data. Truncating costs more than
    // clearing the few slots a typical walk used, so only a deep walk shrinks the stacks.
    if (high > 1024) {
      srcStack.length = 0
      copyStack.length = 0
      keyStack.length = 0
      idxStack.length = 0
      lenStack.length = 0
    } else {
      for (let j = 0; j < high; j++) {
        srcStack[j] = ObjectProto
        copyStack[j] = null
        keyStack[j] = null
      }
    }
    high = 0
    memo = null
  }
}

/** The first reason `value` is not lossless JSON, path-qualified, or `undefined` when it is JSON. */
export function findJsonIssue(value: unknown, rootPath = 'value'): JsonIssue | undefined {
  if (typeof value !== 'object' || value === null) {
    const problem = primitiveProblem(value)
    return problem === undefined ? undefined : { path: rootPath, reason: problem }
  }
  if (snapshots.has(value)) return undefined
  walk(value, rootPath, MODE_CHECK)
  const issue = walkIssue
  walkIssue = undefined
  return issue
}

/** Whether `value` is lossless JSON. Never invokes getters, proxy traps or `toJSON`. */
export function isJsonValue(value: unknown): value is JsonValue {
  if (typeof value !== 'object' || value === null) return primitiveProblem(value) === undefined
  if (snapshots.has(value)) return true
  walk(value, 'value', MODE_CHECK)
  const ok = walkIssue === undefined
  walkIssue = undefined
  return ok
}

function copyOrThrow(value: unknown, rootPath: string, mode: Mode): JsonValue {
  if (typeof value !== 'object' || value === null) {
    const problem = primitiveProblem(value)
    if (problem !== undefined) throw new JsonValueError(rootPath, problem)
    return value as JsonValue
  }
  const copy = walk(value, rootPath, mode)
  const issue = walkIssue
  if (issue !== undefined) {
    walkIssue = undefined
    throw new JsonValueError(issue.path, issue.reason)
  }
  return copy as JsonValue
}

/**
 * Materialize `value` as a detached, deep-frozen lossless-JSON copy in one pass.
 * Throws {@link JsonValueError} naming the first offending member. A previous snapshot (or a value
 * embedding snapshots) reuses them as-is: they are already detached, frozen and proven.
 */
export function snapshotJsonValue(value: unknown, rootPath = 'value'): JsonValue {
  if (typeof value === 'object' && value !== null && snapshots.has(value)) return value as JsonValue
  const snap = copyOrThrow(value, rootPath, MODE_SNAPSHOT)
  if (typeof snap === 'object' && snap !== null) snapshots.add(snap)
  return snap
}

/** A detached, mutable lossless-JSON deep copy (never frozen, shares nothing with the input). */
export function cloneJsonValue(value: unknown, rootPath = 'value'): JsonValue {
  return copyOrThrow(value, rootPath, MODE_CLONE)
}

/**
 * Deep-freeze a JSON value in place with an explicit stack. It does not validate; use
 * {@link snapshotJsonValue} for untrusted input. Returns its argument.
 */
export function deepFreezeJsonValue<T extends JsonValue>(value: T): T {
  if (typeof value !== 'object' || value === null || snapshots.has(value)) return value
  const seen = new Set<object>()
  const stack: object[] = [value]
  while (stack.length > 0) {
    const node = stack.pop()! as Record<string, unknown>
    if (seen.has(node)) continue
    seen.add(node)
    freeze(node)
    for (const key of Object.keys(node)) {
      const child = node[key]
      if (typeof child === 'object' && child !== null && !snapshots.has(child)) stack.push(child)
    }
  }
  return value
}
