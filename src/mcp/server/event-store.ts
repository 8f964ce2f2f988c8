// A bounded, in-memory event store for one Streamable HTTP session, so a client that loses an SSE
// stream can resume it with `Last-Event-ID` and receive what it missed.
import { randomBytes } from 'node:crypto'
import { ConfigError } from '../../errors/config-error.js'
import type { JSONRPCMessage } from '../protocol/wire-types.js'

/** The id of one stored event (what a client sends back as `Last-Event-ID`). */
export type EventId = string
/** The id of one SSE stream of a session. */
export type StreamId = string

/** Where a Streamable HTTP session keeps what it sent, so a resumed stream can replay it. */
export interface EventStore {
  storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId>
  getStreamIdForEventId?(eventId: EventId): Promise<StreamId | undefined>
  replayEventsAfter(
    lastEventId: EventId,
    options: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId>
}

export interface EventStoreLimits {
  /** Most events kept per session (default 1000). */
  maxEvents?: number
  /** Most bytes of serialized messages kept per session (default 8 MiB). */
  maxBytes?: number
  /** How long an event is kept, in ms (default 5 minutes). */
  ttlMs?: number
}

export const DEFAULT_EVENT_STORE_LIMITS: Required<EventStoreLimits> = {
  maxEvents: 1000,
  maxBytes: 8 * 1024 * 1024,
  ttlMs: 5 * 60_000,
}

/** Whether an event id can still be resumed from: kept, dropped by a bound, or never issued here. */
export type EventIdState = 'stored' | 'evicted' | 'unknown'

interface Stored {
  readonly seq: number
  readonly streamId: StreamId
  readonly message: JSONRPCMessage
  readonly bytes: number
  readonly at: number
}

/**
 * Events of every stream of one session, oldest first, within a cap on count, bytes and age;
 * the oldest go first whichever cap is hit. An id is a per-store random token and a sequence
 * number, so an id from another session (or a made-up one) is unknown here, never mistaken for
 * an event of this one, and an id this store issued but has dropped is recognisably evicted.
 * Resuming from an evicted or unknown id is refused rather than replaying from a wrong point.
 *
 * There is deliberately no `getStreamIdForEventId`: with it the transport refuses a resume while
 * the stream's old connection is still registered, and a connection that died without the server
 * noticing stays registered until TCP gives up. Without it, the resume replaces the old
 * connection.
 */
export class BoundedEventStore implements EventStore {
  readonly limits: Required<EventStoreLimits>
  private readonly events = new Map<EventId, Stored>()
  private readonly token: string
  private readonly now: () => number
  private nextSeq = 1
  /** Every sequence number up to this one has been dropped (events go in sequence order). */
  private droppedThrough = 0
  private bytes = 0
  private closed = false

  /**
   * `token` starts every event id (`<token>.<n>`): random unless given, which only a session that
   * goes on from events stored elsewhere does (it stores those first, so their ids come out the same).
   */
  constructor(limits: EventStoreLimits = {}, now: () => number = Date.now, token?: string) {
    this.token = token ?? randomBytes(9).toString('base64url')
    this.limits = { ...DEFAULT_EVENT_STORE_LIMITS, ...definedOnly(limits) }
    for (const [key, value] of Object.entries(this.limits)) {
      if (!Number.isSafeInteger(value) || value < 1)
        throw new ConfigError(`BoundedEventStore limits.${key}`, `expected a whole number above 0, got ${value}`)
    }
    this.now = now
  }

  /** Events currently kept, and their bytes. */
  get size(): { events: number; bytes: number } {
    return { events: this.events.size, bytes: this.bytes }
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = this.nextSeq++
    const id = `${this.token}.${seq}`
    if (this.closed) {
      this.droppedThrough = seq
      return id
    }
    const bytes = Buffer.byteLength(JSON.stringify(message)) + id.length + streamId.length
    this.events.set(id, { seq, streamId, message, bytes, at: this.now() })
    this.bytes += bytes
    this.prune()
    return id
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    this.prune()
    const last = this.events.get(lastEventId)
    if (last === undefined) throw new Error(this.refusal(lastEventId))
    // Iterating the live map also replays what is stored while the replay is being written;
    // the transport skips those when they reach the resumed stream live.
    for (const [id, event] of this.events)
      if (event.streamId === last.streamId && event.seq > last.seq) await send(id, event.message)
    return last.streamId
  }

  /** Whether `eventId` can be resumed from. */
  state(eventId: string): EventIdState {
    this.prune()
    if (this.events.has(eventId)) return 'stored'
    const dot = eventId.lastIndexOf('.')
    if (dot < 0 || eventId.slice(0, dot) !== this.token) return 'unknown'
    const seq = Number(eventId.slice(dot + 1))
    if (!Number.isSafeInteger(seq) || seq < 1 || seq >= this.nextSeq || String(seq) !== eventId.slice(dot + 1))
      return 'unknown'
    return seq <= this.droppedThrough ? 'evicted' : 'unknown'
  }

  /** Why resuming from `eventId` is refused, for the client. */
  refusal(eventId: string): string {
    const { maxEvents, maxBytes, ttlMs } = this.limits
    return this.state(eventId) === 'evicted'
      ? `Last-Event-ID ${JSON.stringify(eventId)} is no longer stored (the session keeps its last ${maxEvents} events, ` +
          `${maxBytes} bytes, for ${ttlMs} ms); the events after it cannot be replayed`
      : `Last-Event-ID ${JSON.stringify(eventId)} is not an event of this session`
  }

  /** Drops every event, and keeps none stored later (the session has closed). */
  clear(): void {
    this.closed = true
    this.droppedThrough = this.nextSeq - 1
    this.events.clear()
    this.bytes = 0
  }

  private prune(): void {
    const { maxEvents, maxBytes, ttlMs } = this.limits
    const oldest = this.now() - ttlMs
    for (const [id, event] of this.events) {
      if (this.events.size <= maxEvents && this.bytes <= maxBytes && event.at > oldest) break
      this.events.delete(id)
      this.bytes -= event.bytes
      this.droppedThrough = event.seq
    }
  }
}

function definedOnly(limits: EventStoreLimits): EventStoreLimits {
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined))
}
