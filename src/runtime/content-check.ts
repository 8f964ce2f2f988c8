import { types } from 'node:util'
import type { ContentBlock, UserMessage } from '../contract/content.js'
import type { JsonValue } from '../contract/json-value.js'
import { ConfigError } from '../errors/config-error.js'
import { ToolgateError } from '../errors/toolgate-error.js'
import { snapshotJsonValue } from '../json/index.js'
import { contentBlockProblem } from '../util/content-shape.js'
import { readOwn, UNREADABLE } from './untrusted.js'

const { isProxy } = types

/**
 * A value of the wrong shape: a TypeError (the pipeline reports it under its own code, such as
 * INVALID_RESULT or RENDER_FAILED), keeping its path apart so a caller's mistake can be rethrown as
 * a ConfigError.
 */
class ShapeError extends TypeError {
  readonly path: string
  readonly problem: string
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`)
    this.path = path
    this.problem = problem
  }
}

/** Snapshot model-facing content and check every block's shape; throws a path-qualified TypeError. */
export function snapshotContent(value: unknown, path: string): ContentBlock[] {
  const snapshot = snapshotJsonValue(value, path)
  if (!Array.isArray(snapshot)) throw new ShapeError(path, 'expected an array of content blocks')
  for (let i = 0; i < snapshot.length; i++) checkBlock(snapshot[i], `${path}[${i}]`)
  return snapshot as unknown as ContentBlock[]
}

/**
 * The content a thrown `ToolgateError` carries for the model (its own `content`), snapshot; undefined
 * when it carries none, or content that is not valid (the failure then shows its message).
 */
export function thrownContent(thrown: unknown): ContentBlock[] | undefined {
  if (typeof thrown !== 'object' || thrown === null || isProxy(thrown) || !(thrown instanceof ToolgateError))
    return undefined
  const content = readOwn(thrown, 'content')
  if (content === undefined || content === UNREADABLE) return undefined
  try {
    const blocks = snapshotContent(content, 'error.content')
    return blocks.length > 0 ? blocks : undefined
  } catch {
    return undefined
  }
}

function checkBlock(block: JsonValue, path: string): void {
  const problem = contentBlockProblem(block, path)
  if (problem !== undefined) throw new ShapeError(problem.path, problem.problem)
}

/** Snapshot one deferred user message and check its shape. */
export function snapshotUserMessage(value: unknown, path: string): UserMessage {
  const snapshot = snapshotJsonValue(value, path)
  checkUserMessage(snapshot, path)
  return snapshot as unknown as UserMessage
}

/** `exec.deferContext(context)`: a malformed message is the tool author's mistake, thrown as a ConfigError. */
export function snapshotDeferredContext(value: unknown): UserMessage {
  try {
    return snapshotUserMessage(value, 'exec.deferContext(context)')
  } catch (error) {
    throw error instanceof ShapeError ? new ConfigError(error.path, error.problem) : error
  }
}

/** Snapshot a list of user messages (a decision's `additionalContexts`). */
export function snapshotUserMessages(value: unknown, path: string): UserMessage[] {
  const snapshot = snapshotJsonValue(value, path)
  if (!Array.isArray(snapshot)) throw new ShapeError(path, 'expected an array of user messages')
  for (let i = 0; i < snapshot.length; i++) checkUserMessage(snapshot[i], `${path}[${i}]`)
  return snapshot as unknown as UserMessage[]
}

function checkUserMessage(message: JsonValue, path: string): void {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new ShapeError(path, 'expected a user message object')
  }
  if (message.role !== 'user') throw new ShapeError(`${path}.role`, 'expected "user"')
  if (!Array.isArray(message.content)) throw new ShapeError(`${path}.content`, 'expected an array of content blocks')
  for (let i = 0; i < message.content.length; i++) checkBlock(message.content[i], `${path}.content[${i}]`)
  if (message.source !== undefined && typeof message.source !== 'string') {
    throw new ShapeError(`${path}.source`, 'expected a string when present')
  }
}
