// What the Code Mode benchmarks share: a host whose sub-calls resolve at once, and a run_code
// run context for a program.
import type { Context } from 'cordis'
import type { CodeModeHost } from '../src/code-mode/run-code.js'
import type { ToolExecutionResult, ToolExecutionToken, ToolRunContext } from '../src/contract/execution.js'

const result: ToolExecutionResult = { isError: false, value: 1, content: [{ type: 'text', text: '1' }] }

export const host: CodeModeHost = {
  execute: async () => result,
  executionMode: () => ({ kind: 'parallel' }),
  logDispatch: async () => {},
}

export function exec(code: string): ToolRunContext {
  return {
    callId: 'bench',
    rootCallId: 'bench',
    parentCallId: null,
    name: 'run_code',
    arguments: { code, description: 'bench' },
    agent: { id: 'bench', ctx: {} as Context },
    token: Symbol('bench') as ToolExecutionToken,
    signal: new AbortController().signal,
    deferContext: () => {},
    concludeTurn: () => {},
    progress: () => {},
  }
}
