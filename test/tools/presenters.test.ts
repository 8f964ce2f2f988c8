import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolDefinition, ToolResult } from '../../src/contract/tool-definition.js'
import type { ToolCallView, ToolResultView } from '../../src/presentation/index.js'
import { renderToolCallLines, renderToolResultLines } from '../../src/presentation/index.js'
import { createBashTool, createFsTools } from '../../src/tools/index.js'
import { byName, runTool, tempDir } from './helpers.js'

let ws: { dir: string; cleanup(): Promise<void> }
let tools: ToolDefinition[]

beforeEach(async () => {
  ws = await tempDir('present')
  await mkdir(path.join(ws.dir, 'src'), { recursive: true })
  await writeFile(path.join(ws.dir, 'src/a.ts'), 'const a = 1\nconst b = 2\n')
  tools = [...createFsTools({ root: ws.dir }), createBashTool({ cwd: ws.dir })]
})

afterEach(async () => {
  await ws.cleanup()
})

/** One real call per tool, in an order where each call's precondition holds. */
const calls: Array<[string, Record<string, unknown>]> = [
  ['read_file', { path: 'src/a.ts', offset: 1, limit: 10 }],
  ['write_file', { path: 'src/new.ts', content: 'fresh\n' }],
  ['write_file', { path: 'src/a.ts', content: 'const a = 1\nconst b = 3\n' }],
  ['edit_file', { path: 'src/a.ts', old_string: 'const b = 3', new_string: 'const b = 4' }],
  ['glob', { pattern: 'src/*.ts' }],
  ['grep', { pattern: 'const', path: 'src' }],
  ['list_dir', { path: 'src' }],
  ['bash', { command: 'echo hi' }],
]

const expectedCard: Record<string, ToolResultView['card']> = {
  read_file: 'read',
  write_file: 'diff',
  edit_file: 'diff',
  glob: 'search',
  grep: 'search',
  list_dir: 'search',
  bash: 'terminal',
}

describe('R-VIEW presenters are pure and replay-safe (issue 7)', () => {
  it('every tool call presents its card, and a replay of the logged args and result gives a deep-equal view', async () => {
    const log: Array<{ name: string; args: unknown; result: ToolResult; call: unknown; view: unknown }> = []
    for (const [name, args] of calls) {
      const def = byName(tools, name)
      const call = def.presentCall?.(args)
      const { result } = await runTool(def, args)
      const view = def.presentResult?.(args, result)
      expect(view?.card).toBe(expectedCard[name])
      log.push({ name, args, result, call, view })
    }
    // Change the world: the views must not depend on it.
    await writeFile(path.join(ws.dir, 'src/a.ts'), 'totally different\n')
    const replayed = JSON.parse(JSON.stringify(log)) as typeof log
    const fresh = [...createFsTools({ root: ws.dir }), createBashTool({ cwd: ws.dir })]
    for (const entry of replayed) {
      const def = byName(fresh, entry.name)
      expect(def.presentCall?.(entry.args)).toEqual(entry.call)
      expect(def.presentResult?.(entry.args, entry.result)).toEqual(entry.view)
      // Views are JSON and frozen-safe: presenting twice does not share or mutate state.
      expect(JSON.parse(JSON.stringify(def.presentResult?.(entry.args, entry.result)))).toEqual(entry.view)
    }
  })

  it('every produced card renders in the terminal, plain and coloured', async () => {
    for (const [name, args] of calls) {
      const def = byName(tools, name)
      const { result } = await runTool(def, args)
      const call = def.presentCall?.(args) as ToolCallView
      const view = def.presentResult?.(args, result) as ToolResultView
      const plainCall = renderToolCallLines(call, { color: false })
      const plainResult = renderToolResultLines(view, { color: false })
      expect(plainCall.length).toBeGreaterThan(0)
      expect(plainResult.length).toBeGreaterThan(0)
      expect(plainResult.join('\n')).not.toContain('\u001b[')
      expect(renderToolResultLines(view, { color: true }).join('\n')).toContain('\u001b[')
    }
  })
})

describe('R-VIEW presenters fall back to generic cards and never throw (issue 7)', () => {
  const names = ['read_file', 'write_file', 'edit_file', 'glob', 'grep', 'list_dir', 'bash']
  const content = [{ type: 'text' as const, text: 'raw content' }]

  it('malformed args give the generic pending card with the raw input', () => {
    for (const name of names) {
      const def = byName(tools, name)
      for (const bad of [{ path: 5, pattern: 7, command: 9 }, null, 'str', [1, 2]]) {
        const view = def.presentCall?.(bad)
        expect(view).toMatchObject({ card: 'generic', title: name })
        if (bad !== null) expect(view).toMatchObject({ rawInput: bad })
      }
    }
  })

  it('malformed meta or args give the generic completed card with the content', () => {
    const validArgs: Record<string, unknown> = Object.fromEntries(calls.map(([n, a]) => [n, a]))
    for (const name of names) {
      const def = byName(tools, name)
      for (const meta of [undefined, null, 5, 'x', {}, { path: 3, lines: 'no', files: {}, paths: [1], diffs: [{}] }]) {
        const result = { isError: false, content, meta } as ToolResult
        expect(def.presentResult?.(validArgs[name], result)).toEqual({ card: 'generic', title: name, content })
      }
      expect(def.presentResult?.({ nonsense: true, path: 1 }, { isError: false, content })).toEqual({
        card: 'generic',
        title: name,
        content,
      })
      expect(def.presentResult?.(validArgs[name], null as unknown as ToolResult)).toMatchObject({ card: 'generic' })
    }
  })

  it('error results give a generic card titled as a failure', () => {
    const args: Record<string, unknown> = Object.fromEntries(calls.map(([n, a]) => [n, a]))
    for (const name of names) {
      const result: ToolResult = { isError: true, content: [{ type: 'text', text: 'path: x does not exist' }] }
      expect(byName(tools, name).presentResult?.(args[name], result)).toEqual({
        card: 'generic',
        title: `${name} failed`,
        content: [{ type: 'text', text: 'path: x does not exist' }],
      })
    }
  })
})
