// examples/openai-agent.ts against a fake OpenAI-compatible server: the documented agent works (issue #12).
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { runAgent } from '../../examples/openai-agent.js'
import type { FakeServer } from './fake-server.js'
import { chatServer } from './openai-chat-server.js'

let server: FakeServer | undefined
let root: string | undefined
afterEach(async () => {
  await server?.close()
  if (root) await rm(root, { recursive: true, force: true })
  server = undefined
  root = undefined
})

describe('examples/openai-agent.ts (issue #12)', () => {
  it('lists, reads, is refused a write without a terminal, and answers', async () => {
    root = await mkdtemp(join(tmpdir(), 'toolgate-agent-'))
    await writeFile(join(root, 'README.md'), '# Bees\nA project about bees.\n')
    const started = await chatServer([
      [
        ['l', 'list_dir', '{}'],
        ['r', 'read_file', '{"path":"README.md"}'],
        ['w', 'write_file', '{"path":"notes.txt","content":"hi"}'],
      ],
      'The directory holds a README about bees.',
    ])
    server = started.server
    const output = new PassThrough()
    let printed = ''
    output.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8')
    })
    const run = await runAgent({ client: started.client, model: 'fake', task: 'What is here?', root, output })
    expect(server.violations).toEqual([])
    expect(run.stopReason).toBe('done')
    const results = Object.fromEntries(run.steps[0].results.map((r) => [r.callId, r.result]))
    expect(results.l.isError).toBe(false)
    expect(results.r).toMatchObject({ isError: false })
    expect(JSON.stringify(results.r.content)).toContain('A project about bees.')
    expect(results.w).toMatchObject({ isError: true, error: { info: { code: 'TOOL_DENIED' } } })
    expect(await readdir(root)).toEqual(['README.md'])
    // The model saw the file's text in the second request.
    expect(JSON.stringify(started.bodies[1].messages)).toContain('A project about bees.')
    expect(printed).toContain('→ read_file {"path":"README.md"}')
    expect(printed).toContain('✗ write_file')
    expect(printed).toContain('The directory holds a README about bees.')
    expect(printed).toContain('(done after 2 model requests)')
  })
})
