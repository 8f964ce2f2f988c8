// What `serve`'s first listing (raw-first.ts over stdio, raw-first-http.ts over HTTP, run by the
// executable's first script) hands to the gateway that the CLI's bundle starts: kept on the global
// object, since each bundle has its own copy of this module.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import { processShared } from '../util/process-shared.js'

export interface RawFirstRecord {
  /** Every byte the client sent, what the first listing read first; the gateway reads this instead of process.stdin. */
  stdin?: Readable
  /**
   * The client's requests answered already, by their place among its messages (its `initialize`,
   * and its `tools/list` with the JSON of the tools listed).
   */
  answered?: { readonly initialize: number; readonly list?: number; readonly tools?: string }
  /** Over HTTP: the port the first script opened, for the gateway to serve on. */
  http?: RawHttpHandover
}

/** A POST body the first script read already: its text, or undefined when it passed the size limit (drained). */
export interface ReadBody {
  readonly text: string | undefined
}

/** What the gateway's HTTP face does with each request, once it takes the port. */
export type RawHttpHandler = (req: IncomingMessage, res: ServerResponse, body?: ReadBody) => void

/** The port `serve --http`'s first script opened and announced, with what it answered there. */
export interface RawHttpHandover {
  /** The listening server. */
  readonly server: Server
  /** The port it listens on (the one asked for, or the one the system gave for 0). */
  readonly port: number
  /** The one session the first script answered (its `initialize`, maybe its first `tools/list`). */
  readonly session?: RawHttpSession
  /** The answers' HTTP statuses, in order, for the gateway's request count. */
  readonly statuses: readonly number[]
  /**
   * From now on every request goes to `handler`: first those that came while the gateway loaded
   * (held, in order), then each as it comes.
   */
  take(handler: RawHttpHandler): void
  /** The gateway did not open: the held requests are answered 503 and the port is closed. */
  close(): Promise<void>
}

/** A session the first script opened and answered, for the gateway to adopt under the same id. */
export interface RawHttpSession {
  readonly id: string
  /** The token of its event ids (`<token>.<n>`), for the gateway's event store to go on with. */
  readonly eventToken: string
  /** The events it stored, in order, under their stream ids: the same store replays them later. */
  readonly events: readonly { readonly streamId: string; readonly message: Record<string, unknown> }[]
  /** How many request streams it opened (the transport numbers its own from there). */
  readonly streams: number
  /**
   * The client's messages it took, in order (its `initialize`, maybe `notifications/initialized`
   * and `tools/list`): the gateway's server gets them too, and its answers to them are dropped.
   */
  readonly messages: readonly Record<string, unknown>[]
  /** The JSON of the tools its `tools/list` answered, when it answered one. */
  readonly tools?: string
}

/** The process's record (empty unless the first listing ran). */
export function rawFirstRecord(): RawFirstRecord {
  return processShared('rawFirst', () => ({}))
}

/** The record, taken once: a gateway started later in the same process starts afresh. */
export function takeRawFirst(): RawFirstRecord {
  const record = rawFirstRecord()
  const taken = { ...record }
  record.stdin = undefined
  record.answered = undefined
  record.http = undefined
  return taken
}
