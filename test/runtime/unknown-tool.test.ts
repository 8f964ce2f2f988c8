// UNKNOWN_TOOL suggests the nearest names the caller can see (issue 17), in the message the model
// reads and as `error.info.suggestions`; a tool hidden from the caller is never named.
import { describe, expect, it } from 'vitest'
import { createAgent, createToolRuntime, type ToolExecutionResult } from '../../src/index.js'
import { nearestNames } from '../../src/runtime/suggest.js'
import { rawTool, signal } from './helpers.js'

async function runtime() {
  const handle = await createToolRuntime()
  for (const name of ['read_file', 'write_file', 'list_dir', 'delete_file', 'grep', 'glob']) {
    handle.tools.register(rawTool(name))
  }
  return handle
}

function failureOf(result: ToolExecutionResult) {
  if (!result.isError) throw new Error('expected a failure')
  return result.error
}

describe('UNKNOWN_TOOL suggestions', () => {
  it('names the nearest visible tool in the message and in error.info.suggestions', async () => {
    const { tools } = await runtime()
    const error = failureOf(await tools.execute({ callId: 'c', name: 'reed_file', arguments: {}, signal: signal() }))
    expect(error.info).toEqual({ name: 'ToolNotFoundError', code: 'UNKNOWN_TOOL', suggestions: ['read_file'] })
    expect(error.message).toBe(
      'Unknown tool "reed_file": no tool of that name is visible to this agent. Did you mean "read_file"?',
    )
  })

  it('catches case, separators, reordered words and prefixes; closest first, at most three', async () => {
    const { tools } = await runtime()
    const suggest = async (name: string) =>
      failureOf(await tools.execute({ callId: 'c', name, arguments: {}, signal: signal() })).info?.suggestions
    expect(await suggest('Read-File')).toEqual(['read_file'])
    expect(await suggest('file_read')).toEqual(['read_file'])
    expect(await suggest('list')).toEqual(['list_dir'])
    expect(await suggest('gerp')).toEqual(['grep'])
    expect(await suggest('rite_file')).toEqual(['write_file', 'read_file'])
    expect(nearestNames('tool', ['tool1', 'tool2', 'tool3', 'tool4', 'tools'])).toEqual(['tool1', 'tool2', 'tool3'])
  })

  it('without a close name the error stays as before (no suggestions field)', async () => {
    const { tools } = await runtime()
    const error = failureOf(
      await tools.execute({ callId: 'c', name: 'launch_rocket', arguments: {}, signal: signal() }),
    )
    expect(error.info).toEqual({ name: 'ToolNotFoundError', code: 'UNKNOWN_TOOL' })
    expect(error.message).toBe('Unknown tool "launch_rocket": no tool of that name is visible to this agent')
  })

  it('never names a tool the caller cannot see: restricted away, or another agent’s own', async () => {
    const { ctx, tools } = await runtime()
    const limited = createAgent(ctx, { id: 'limited' })
    limited.ctx.tools.restrict({ deny: ['delete_file'] })
    const other = createAgent(ctx, { id: 'other' })
    other.ctx.tools.register(rawTool('deploy_prod'))
    const run = (name: string, agent?: typeof limited) =>
      tools.execute({ callId: 'c', name, arguments: {}, agent, signal: signal() }).then(failureOf)

    const hidden = await run('delete_fil', limited)
    expect(hidden.info?.suggestions).toBeUndefined()
    expect(hidden.message).not.toMatch(/delete_file/)
    // Visible names are still suggested to the same agent.
    expect((await run('writ_file', limited)).info?.suggestions).toEqual(['write_file'])
    // Another agent's own tool: neither the global layer nor a sibling agent hears of it.
    for (const agent of [undefined, limited]) {
      const error = await run('deploy_prd', agent)
      expect(error.info?.suggestions).toBeUndefined()
      expect(error.message).not.toMatch(/deploy_prod/)
    }
    expect((await run('deploy_prd', other)).info?.suggestions).toEqual(['deploy_prod'])
    // The agent that may not call delete_file gets nothing, the global layer still gets it.
    expect((await run('delete_fil')).info?.suggestions).toEqual(['delete_file'])
  })
})
