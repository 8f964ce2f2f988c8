import { abortedOf, reasonOf } from './untrusted.js'

/** A signal that aborts when either source aborts, and a release that detaches it from both. */
export interface FusedSignal {
  readonly signal: AbortSignal
  /** Detach from the sources; the fused signal keeps its state but no source holds it any more. */
  release(): void
  /**
   * Abort the fused signal itself with `reason` (a no-op once it aborted): its owner can end it
   * without a controller and a fusion of its own on top.
   */
  abort(reason: unknown): void
}

/**
 * Per-source relays: one permanent `abort` listener per source signal, fanning out to the fused
 * controllers currently attached. `AbortSignal.any` keeps every dependant it ever made referenced
 * from a long-lived source (Node 20 grew ~50–110 bytes per call that way), and a listener per call
 * would trip EventTarget's leak warning under parallel calls; a Set entry per live fusion does
 * neither, and `release()` removes it when the call settles.
 *
 * The set rides on the source itself, under a symbol: a WeakMap entry per short-lived caller
 * signal cost twice as much per fusion (Node 22: 1.6 against 0.8 µs) and left the collector an
 * ephemeron per call. A source that cannot take a property (frozen) keeps its set in the WeakMap.
 */
const RELAYS = Symbol('toolgate.signalRelays')
type Relayed = AbortSignal & { [RELAYS]?: Set<AbortController> | undefined }
const sealedRelays = new WeakMap<AbortSignal, Set<AbortController>>()

function relaysOf(source: AbortSignal): Set<AbortController> | undefined {
  return (source as Relayed)[RELAYS] ?? sealedRelays.get(source)
}

function relay(this: AbortSignal): void {
  const attached = relaysOf(this)
  if (attached === undefined) return
  // Assigned, not deleted: a deleted property would turn the signal into a slow dictionary object.
  // (A property set before the signal was sealed is still writable; a frozen signal never aborts.)
  if ((this as Relayed)[RELAYS] !== undefined) (this as Relayed)[RELAYS] = undefined
  else sealedRelays.delete(this)
  const reason = reasonOf(this)
  for (const controller of attached) controller.abort(reason)
}

function attach(source: AbortSignal, controller: AbortController): void {
  let attached = relaysOf(source)
  if (attached === undefined) {
    attached = new Set()
    if (Object.isExtensible(source)) (source as Relayed)[RELAYS] = attached
    else sealedRelays.set(source, attached)
    source.addEventListener('abort', relay, { once: true })
  }
  attached.add(controller)
}

function detach(source: AbortSignal, controller: AbortController): void {
  relaysOf(source)?.delete(controller)
}

/** Fuse two genuine AbortSignals; the first to abort gives the fused signal its reason. */
export function fuseSignals(a: AbortSignal, b: AbortSignal): FusedSignal {
  return fuse([a, b])
}

/**
 * A signal that aborts when `source` does (with its reason) or when its own `abort` is called,
 * whichever comes first: a fusion of `source` with a controller of one's own, at the cost of one
 * signal instead of two.
 */
export function followSignal(source: AbortSignal): FusedSignal {
  return fuse([source])
}

/** A signal of its own that follows `sources`: already aborted when one of them is (the first one's reason). */
function fuse(sources: readonly AbortSignal[]): FusedSignal {
  const controller = new AbortController()
  const abort = (reason: unknown): void => controller.abort(reason)
  for (const source of sources)
    if (abortedOf(source)) {
      controller.abort(reasonOf(source))
      return { signal: controller.signal, release: noop, abort }
    }
  for (const source of sources) attach(source, controller)
  return {
    signal: controller.signal,
    release() {
      for (const source of sources) detach(source, controller)
    },
    abort,
  }
}

function noop(): void {}

/** How many fused signals a source currently feeds (for tests of the release discipline). */
export function attachedCount(source: AbortSignal): number {
  return relaysOf(source)?.size ?? 0
}
