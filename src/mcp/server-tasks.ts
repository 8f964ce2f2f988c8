// MCP tasks on the serving side: a task-augmented `tools/call` answers at once with a task, the
// call runs in the background, and the client follows it with tasks/get, tasks/result, tasks/list
// and tasks/cancel (the SDK's handlers over the store kept here, one per session).
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/index.js'
import type { RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { CallToolResult, ServerCapabilities, Task } from './wire-types.js'

/** The capability a server declares when it runs calls as tasks. */
export const TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
}

/** A store that also aborts the background call of a task the client cancelled. */
class CancellingTaskStore extends InMemoryTaskStore {
  readonly running = new Map<string, AbortController>()

  override async updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId)
    if (status === 'cancelled') this.running.get(taskId)?.abort()
  }
}

/** A session's tasks: the SDK's store and message queue, and how to start one. */
export class McpServerTasks {
  private readonly store = new CancellingTaskStore()
  /** Requests each task is waiting on its client for. */
  private readonly waiting = new Map<string, number>()
  /** Give to the SDK `Server`'s options. */
  readonly options = { taskStore: this.store, taskMessageQueue: new InMemoryTaskMessageQueue() }

  /**
   * Create a task for a call and run `run` in the background; its result (a tool error included,
   * as a result with `isError`) completes the task. `run` gets the task's signal (aborted by
   * `tasks/cancel` or the session closing) and the task's id.
   */
  async start(
    store: RequestTaskStore,
    ttl: number | undefined,
    run: (signal: AbortSignal, taskId: string) => Promise<CallToolResult>,
  ): Promise<{ task: Task }> {
    const task = await store.createTask(ttl === undefined ? {} : { ttl })
    const controller = new AbortController()
    this.store.running.set(task.taskId, controller)
    run(controller.signal, task.taskId)
      .then(
        (result) => store.storeTaskResult(task.taskId, 'completed', result),
        (error) =>
          store.storeTaskResult(task.taskId, 'failed', {
            isError: true,
            content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }],
          }),
      )
      // A cancelled or expired task takes no result; nothing is left to tell.
      .catch(() => {})
      .finally(() => this.store.running.delete(task.taskId))
    return { task }
  }

  /**
   * Around a request the call sends to its client: the task shows `input_required` meanwhile, so
   * the client calls `tasks/result`, which delivers the request.
   */
  async waitingForInput<T>(taskId: string, send: () => Promise<T>): Promise<T> {
    // Counted, so that of two requests at once the first answered does not end the wait of the other.
    this.waiting.set(taskId, (this.waiting.get(taskId) ?? 0) + 1)
    await this.store.updateTaskStatus(taskId, 'input_required').catch(() => {})
    try {
      return await send()
    } finally {
      const left = (this.waiting.get(taskId) ?? 1) - 1
      if (left > 0) this.waiting.set(taskId, left)
      else {
        this.waiting.delete(taskId)
        const task = await this.store.getTask(taskId).catch(() => null)
        if (task?.status === 'input_required') await this.store.updateTaskStatus(taskId, 'working').catch(() => {})
      }
    }
  }

  /** The session ended: its running calls are aborted and the store's timers stopped. */
  close(): void {
    for (const controller of this.store.running.values()) controller.abort()
    this.store.running.clear()
    this.store.cleanup()
  }
}
