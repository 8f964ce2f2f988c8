// The messages between the encoder pool and its worker threads.
import type { EncoderRuntime } from './use-lite-encoder.js'

/** What the pool gives a worker at start. */
export interface EncoderWorkerData {
  /** A module path to resolve the encoder's packages from (the worker's own may be a data: URL). */
  readonly requireFrom: string
}

/** Pool → worker: embed these texts (one encoder call). */
export interface EncoderJobMessage {
  readonly job: number
  readonly texts: readonly string[]
}

/** Worker → pool. Vectors come back as one transferred buffer, `dimensions` floats per text. */
export type EncoderWorkerMessage =
  | { readonly type: 'ready'; readonly id: string; readonly runtime?: EncoderRuntime }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'done'; readonly job: number; readonly vectors: Float32Array; readonly dimensions: number }
  | { readonly type: 'error'; readonly job: number; readonly message: string }
