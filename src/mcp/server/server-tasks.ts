// MCP tasks on the serving side (2025-11-25): a task-augmented `tools/call` answers at once with a
// task, the call runs in the background, and the client follows it with tasks/get, tasks/result,
// tasks/list and tasks/cancel. The SDK v2 keeps no task store on the server side (tasks are an
// extension in 2026-07-28), so each session keeps its own here: the tasks, their results, and the
// requests a task's call sends its client, delivered through that task's `tasks/result`.
import { randomUUID } from 'node:crypto'
import { JsonRpcCode } from '../protocol/jsonrpc-codes.js'
import type { CallToolResult, ServerCapabilities, Task } from '../protocol/wire-types.js'

/** The capability a server declares when it runs calls as tasks. */
export const TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
}

/** The `_meta` key that ties a message to its task. */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task'

/** How often a client is told to poll a task (a suggestion; the spec leaves it to the server). */
const POLL_INTERVAL_MS = 500
/** Tasks listed per `tasks/list` page. */
const PAGE_SIZE = 100

/** A JSON-RPC error a task request is answered with (the SDK sends its code and message as they are). */
export class TaskRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

const TERMINAL: ReadonlySet<Task['status']> = new Set(['completed', 'failed', 'cancelled'])

interface Entry {
  task: Task
  result?: CallToolResult
  readonly controller: AbortController
  /** Requests to the client waiting for the next `tasks/result` to carry them. */
  readonly outbound: ((relatedRequestId: string | number) => void)[]
  /** Woken whenever the task changes or a request joins `outbound`. */
  readonly watchers: Set<() => void>
  /** Requests the task is waiting on its client for (two at once each end their own wait). */
  waiting: number
  expiry?: ReturnType<typeof setTimeout>
}

/** A session's tasks, and how to start one. */
export class McpServerTasks {
  private readonly entries = new Map<string, Entry>()
  private closed = false

  /**
   * Create a task for a call and run `run` in the background; its result (a tool error included,
   * as a result with `isError`) completes the task. `run` gets the task's signal (aborted by
   * `tasks/cancel` or the session closing) and the task's id.
   */
  start(
    ttl: number | undefined,
    run: (signal: AbortSignal, taskId: string) => Promise<CallToolResult>,
  ): { task: Task } {
    const now = new Date().toISOString()
    const task: Task = {
      taskId: randomUUID(),
      status: 'working',
      ttl: ttl ?? null,
      createdAt: now,
      lastUpdatedAt: now,
      pollInterval: POLL_INTERVAL_MS,
    }
    const entry: Entry = { task, controller: new AbortController(), outbound: [], watchers: new Set(), waiting: 0 }
    this.entries.set(task.taskId, entry)
    if (ttl !== undefined && Number.isFinite(ttl) && ttl >= 0) {
      // The task and its result are forgotten once its time to live is over, finished or not.
      entry.expiry = setTimeout(() => this.forget(task.taskId), ttl)
      entry.expiry.unref?.()
    }
    run(entry.controller.signal, task.taskId)
      .then(
        (result) => this.finish(entry, 'completed', result),
        (error) =>
          this.finish(entry, 'failed', {
            isError: true,
            content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }],
          }),
      )
      .catch(() => {})
    return { task: { ...task } }
  }

  /** `tasks/get`. */
  get(taskId: unknown): Task {
    return { ...this.entry(taskId).task }
  }

  /** `tasks/list`: the session's tasks, oldest first, a page at a time. */
  list(cursor: unknown): { tasks: Task[]; nextCursor?: string } {
    const all = [...this.entries.values()]
    let from = 0
    if (cursor !== undefined) {
      from = typeof cursor === 'string' && /^\d+$/.test(cursor) ? Number(cursor) : Number.NaN
      if (!(from >= 0 && from <= all.length))
        throw new TaskRequestError(JsonRpcCode.InvalidParams, `Invalid cursor: ${String(cursor)}`)
    }
    const page = all.slice(from, from + PAGE_SIZE).map((entry) => ({ ...entry.task }))
    const next = from + PAGE_SIZE
    return { tasks: page, ...(next < all.length ? { nextCursor: String(next) } : {}) }
  }

  /** `tasks/cancel`: a task still running is cancelled and its call aborted. */
  cancel(taskId: unknown): Task {
    const entry = this.entry(taskId)
    if (TERMINAL.has(entry.task.status))
      throw new TaskRequestError(
        JsonRpcCode.InvalidParams,
        `Cannot cancel task: already in terminal status '${entry.task.status}'`,
      )
    this.update(entry, 'cancelled', 'The task was cancelled by request.')
    entry.controller.abort()
    return { ...entry.task }
  }

  /**
   * `tasks/result`: waits until the task ends, sending meanwhile (related to this request) the
   * requests its call has for the client; then the call's result, tied to the task.
   */
  async result(taskId: unknown, relatedRequestId: string | number, signal: AbortSignal): Promise<CallToolResult> {
    const entry = this.entry(taskId)
    while (!TERMINAL.has(entry.task.status)) {
      for (let next = entry.outbound.shift(); next !== undefined; next = entry.outbound.shift()) next(relatedRequestId)
      if (TERMINAL.has(entry.task.status)) break
      await this.changed(entry, signal)
    }
    if (entry.task.status === 'cancelled' || entry.result === undefined)
      throw new TaskRequestError(JsonRpcCode.InvalidParams, `Task ${entry.task.taskId} was cancelled: it has no result`)
    const { result } = entry
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId: entry.task.taskId } } }
  }

  /**
   * A request the task's call sends its client: it waits for the client's next `tasks/result`,
   * which carries it (`send` gets that request's id); the task is `input_required` until answered.
   */
  async waitingForInput<T>(taskId: string, send: (relatedRequestId: string | number) => Promise<T>): Promise<T> {
    const entry = this.entries.get(taskId)
    if (entry === undefined || TERMINAL.has(entry.task.status)) throw new Error(`task ${taskId} has ended`)
    entry.waiting++
    if (entry.task.status === 'working') this.update(entry, 'input_required')
    try {
      const relatedRequestId = await new Promise<string | number>((resolve, reject) => {
        const { signal } = entry.controller
        if (signal.aborted) return reject(signal.reason)
        const stop = () => reject(signal.reason)
        signal.addEventListener('abort', stop, { once: true })
        entry.outbound.push((id) => {
          signal.removeEventListener('abort', stop)
          resolve(id)
        })
        this.wake(entry)
      })
      return await send(relatedRequestId)
    } finally {
      entry.waiting--
      if (entry.waiting === 0 && entry.task.status === 'input_required') this.update(entry, 'working')
    }
  }

  /** The session ended: its running calls are aborted, its tasks forgotten. */
  close(): void {
    this.closed = true
    for (const taskId of [...this.entries.keys()]) this.forget(taskId)
  }

  private entry(taskId: unknown): Entry {
    const entry = typeof taskId === 'string' ? this.entries.get(taskId) : undefined
    if (entry === undefined)
      throw new TaskRequestError(JsonRpcCode.InvalidParams, `Failed to retrieve task: Task not found`)
    return entry
  }

  private finish(entry: Entry, status: 'completed' | 'failed', result: CallToolResult): void {
    // A cancelled or forgotten task takes no result.
    if (this.closed || TERMINAL.has(entry.task.status) || this.entries.get(entry.task.taskId) !== entry) return
    entry.result = result
    this.update(entry, status)
  }

  private update(entry: Entry, status: Task['status'], statusMessage?: string): void {
    entry.task = {
      ...entry.task,
      status,
      lastUpdatedAt: new Date().toISOString(),
      ...(statusMessage === undefined ? {} : { statusMessage }),
    }
    this.wake(entry)
  }

  private wake(entry: Entry): void {
    const watchers = [...entry.watchers]
    entry.watchers.clear()
    for (const watcher of watchers) watcher()
  }

  private changed(entry: Entry, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      const stop = () => {
        entry.watchers.delete(done)
        reject(signal.reason)
      }
      const done = () => {
        signal.removeEventListener('abort', stop)
        resolve()
      }
      entry.watchers.add(done)
      signal.addEventListener('abort', stop, { once: true })
    })
  }

  private forget(taskId: string): void {
    const entry = this.entries.get(taskId)
    if (entry === undefined) return
    this.entries.delete(taskId)
    clearTimeout(entry.expiry)
    entry.controller.abort()
    if (!TERMINAL.has(entry.task.status)) this.update(entry, 'cancelled')
    this.wake(entry)
  }
}
