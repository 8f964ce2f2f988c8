// `toolgate serve --http` (Streamable HTTP on 127.0.0.1) with the real SDK client: the fs tools,
// client cancellation reaching bash's process group, and `ask` answered through elicitation.
import { readdirSync, readFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Connected, serveHttp, tempDir, textOf, writeConfig } from './helpers.js'

let dir: string
let cleanup: () => Promise<void>
let s: Connected
let answer: { action: 'accept' | 'decline'; content?: { approve: boolean } } = { action: 'decline' }
const asked: string[] = []

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
  await writeFile(path.join(dir, 'a.txt'), 'alpha\n')
  const config = await writeConfig(dir, { root: '.', bash: true, policy: { ask: ['write_file'] } })
  s = await serveHttp(['--config', config], { elicitation: {} })
  s.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message)
    return answer
  })
})
afterAll(async () => {
  await s.close()
  await cleanup()
})

/** Whether a live (non-zombie) process has `marker` in its command line. */
function running(marker: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.startsWith('Z')) continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) return true
    } catch {
      // the process ended while we looked
    }
  }
  return false
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const until = Date.now() + 15_000
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('toolgate serve --http', () => {
  it('lists and calls the fs tools', async () => {
    const { tools } = await s.client.listTools()
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'glob', 'bash']))
    const read = await s.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
    expect(textOf(read)).toContain('alpha')
    const glob = await s.client.callTool({ name: 'glob', arguments: { pattern: '*.txt' } })
    expect(textOf(glob)).toContain('a.txt')
  })

  it('client cancellation kills a running bash call and its process group', async () => {
    // Found by a unique marker in /proc, not by pid: under the bubblewrap sandbox `$$` is a pid
    // of the sandbox's own namespace, while /proc here sees every process the call started.
    const marker = `31${Math.floor(Math.random() * 1e6)}`
    const controller = new AbortController()
    const call = s.client.callTool(
      { name: 'bash', arguments: { command: `sleep ${marker} & echo started > started.txt; wait` } },
      undefined,
      { signal: controller.signal },
    )
    call.catch(() => {})
    await waitFor(
      async () => (await readFile(path.join(dir, 'started.txt'), 'utf8').catch(() => '')).includes('started'),
      'bash to start',
    )
    await waitFor(() => running(marker), 'the sleeper to be visible')
    controller.abort('the user stopped it')
    await expect(call).rejects.toThrow()
    await waitFor(() => !running(marker), 'the process group to die')
  })

  it('an ask rule is put to the client as an elicitation; accept runs the call, decline refuses it', async () => {
    answer = { action: 'accept', content: { approve: true } }
    const allowed = await s.client.callTool({ name: 'write_file', arguments: { path: 'ok.txt', content: 'yes' } })
    expect(allowed.isError).toBeFalsy()
    expect(asked.at(-1)).toMatch(/write_file/)
    expect(asked.at(-1)).toContain('ok.txt')
    expect(await readFile(path.join(dir, 'ok.txt'), 'utf8')).toBe('yes')

    answer = { action: 'decline' }
    const declined = await s.client.callTool({ name: 'write_file', arguments: { path: 'no.txt', content: 'no' } })
    expect(declined.isError).toBe(true)
    expect(textOf(declined)).toMatch(/declined/)
    await expect(readFile(path.join(dir, 'no.txt'), 'utf8')).rejects.toThrow()
    expect(asked).toHaveLength(2)
  })

  it('a client without elicitation gets a denial for an ask rule', async () => {
    const plain = new Client({ name: 'plain', version: '1.0.0' }, { capabilities: {} })
    await plain.connect(new StreamableHTTPClientTransport(new URL(s.url!)))
    try {
      const result = await plain.callTool({ name: 'write_file', arguments: { path: 'plain.txt', content: 'x' } })
      expect(result.isError).toBe(true)
      await expect(readFile(path.join(dir, 'plain.txt'), 'utf8')).rejects.toThrow()
      // Other tools are unaffected.
      expect((await plain.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })).isError).toBeFalsy()
    } finally {
      await plain.close()
    }
  })
})
