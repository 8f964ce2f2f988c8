// Every example under examples/ runs as a user runs it: a separate Node process (tsx) whose
// `import 'toolgate'` resolves through the package's own `exports` to the BUILT package (dist/),
// and its output says it did what the guide says (issue 17). Examples that talk to a model use
// the scripted model, or a fake OpenAI server on 127.0.0.1 speaking the real wire format.
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { FakeServer } from './providers/fake-server.js'
import { chatServer } from './providers/openai-chat-server.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url))
// No `paths` here: 'toolgate' is the package itself (dist/), not the sources.
const tsconfig = fileURLToPath(new URL('./examples.tsconfig.json', import.meta.url))

async function run(example: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [tsx, '--tsconfig', tsconfig, `examples/${example}`], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1', ...env },
    timeout: 120_000,
  })
  return stdout
}

const servers: FakeServer[] = []
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
})

// What each example must print. Examples that are servers (serve-mcp.ts, driven by
// use-mcp-server.ts) are covered through their users.
const expectations: Record<string, (out: string) => void> = {
  'quickstart.ts': (out) => {
    expect(out).toContain('get_weather {"city":"Lisbon"}: ok')
    expect(out).toContain('send_email {"to":"ana@example.com","body":"Sunny, 21 °C"}: ok')
    expect(out).toContain('send_email {"to":"bob@elsewhere.org","body":"Sunny, 21 °C"}: TOOL_DENIED')
    expect(out).toContain('stop: done')
    expect(out).toContain('answer: It is sunny in Lisbon.')
  },
  'tools.ts': (out) => {
    expect(out).toContain('"required":["query"]')
    expect(out).toContain('"value":[{"title":"The Life of the Bee","year":1901}]')
    expect(out).toContain('INVALID_ARGS')
    expect(out).toContain('args.query: expected string, got number')
    expect(out).toContain('args.format: expected one of "paper", "ebook"')
  },
  'agents-and-scopes.ts': (out) => {
    expect(out).toContain('global:   read_file, write_file, bash\n')
    expect(out).toContain('lead:     read_file, write_file, bash, plan\n')
    expect(out).toContain('reviewer: read_file, plan\n')
    expect(out).toContain('reviewer calls bash: UNKNOWN_TOOL')
    expect(out).toContain('global after dispose: read_file, write_file, bash')
  },
  'pipeline.ts': (out) => {
    const steps = out.split('\n').flatMap((line) => (line.startsWith('  ') ? [line.trim().split(/\s+/)[0]] : []))
    expect(steps).toEqual(['call', 'pre-execute', 'execute', 'progress', 'post-execute', 'finalize', 'result'])
  },
  'policies.ts': (out) => {
    expect(out).toContain('https://example.com: ok <p>page at https://example.com</p> token=[redacted]')
    expect(out).toContain('http://example.com: TOOL_DENIED Tool "fetch_page" was denied: plain http is not allowed')
    expect(out).toMatch(/https:\/\/wiki\.internal: TOOL_DENIED .*approval/)
    expect(out).toContain('https://example.com/admin: TOOL_DENIED Tool "fetch_page" was denied: no admin pages')
    const big = /https:\/\/example\.com\/big: ok x+ \((\d+) chars\)/.exec(out)
    expect(Number(big?.[1])).toBeLessThan(2_048)
  },
  'host-options.ts': (out) => {
    expect(out).toContain('c1: moved 10\n')
    expect(out).toContain(
      'waiting: {"callId":"c2","rootCallId":"c2","parentCallId":null,"agentId":null,"toolName":"transfer","arguments":{"amount":99},"reason":null}',
    )
    expect(out).toContain('c2: APPROVAL_SUSPENDED\n')
    expect(out).toContain('c2 resumed: moved 99\n')
  },
  'scheduling.ts': (out) => {
    const lines = out.trim().split('\n')
    // The two reads overlap; the write starts after both ended; the last read after the write.
    expect(lines.slice(0, 2).sort()).toEqual(['start read a', 'start read b'])
    expect(lines.slice(4, 8)).toEqual(['start write c', 'end   write c', 'start read d', 'end   read d'])
    expect(lines[8]).toBe('1:parallel 2:parallel 3:exclusive 4:parallel')
  },
  'code-mode.ts': (out) => {
    expect(out).toContain('the model sees: run_code')
    expect(out).toContain('get_price(args: ToolArgsMap["get_price"]): Promise<ToolOutputMap["get_price"]>')
    expect(out).toContain('{"result":{"total":1769},"logs":["prices 450, 320, 999"]}')
  },
  'presentation.ts': (out) => {
    expect(out).toContain('card: diff')
    expect(out).toContain('- ants make hills')
    expect(out).toContain('+ ants make tunnels')
  },
  'suspend-and-resume.ts': (out) => {
    expect(out).toContain('stop: approval-required')
    expect(out).toContain('pending: large (more than 100.00)')
    expect(out).toContain('stop: done; answer: Both transfers are settled.')
    const journal = out.split('\n').filter((line) => line.startsWith('journal: '))
    expect(journal).toContain('journal: result small')
    expect(journal.filter((line) => line === 'journal: result large')).toHaveLength(2) // suspended, then ran
    expect(journal.filter((line) => line === 'journal: result small')).toHaveLength(1) // never re-run
    // The loop's side: the turn that suspended and the resumed one, each with its steps (issue 25 item 6).
    expect(journal.filter((line) => line.startsWith('journal: turn-started turn-'))).toHaveLength(2)
    expect(journal.filter((line) => line.startsWith('journal: model-reply turn-'))).toHaveLength(2)
    expect(journal.filter((line) => line.startsWith('journal: turn-ended turn-'))).toHaveLength(2)
  },
  'add-approval.ts': (out) => {
    expect(out).toContain('delete_file {"path":"tmp/cache.json"}\n  -> tmp/cache.json')
    expect(out).toContain(
      '-> TOOL_DENIED: Tool "delete_file" was denied: the approval service denied the call: nothing',
    )
    expect(out).toContain('deploy {"env":"production"}\n  asked: deploy {"env":"production"} (no reason)\n  -> staging')
    // The third deploy is answered by the standing rule: no "asked" line before its result.
    expect(out).toMatch(/deploy \{"env":"staging"\}\n {2}-> staging\nstanding rules: deploy allowed-always/)
  },
  'add-timeout.ts': (out) => {
    expect(out).toContain('slow_search {"query":"bees","delayMs":10} -> "3 hits for \\"bees\\""')
    expect(out).toContain('slow_search {"query":"wasps","delayMs":5000} -> TOOL_TIMEOUT')
    expect(out).toContain('crawl {"pages":10} -> 10')
    expect(out).toContain('crawl {"pages":10,"stallAt":3} -> TOOL_TIMEOUT')
  },
  'embed-in-cordis.ts': (out) => {
    expect(out).toContain('visible: now\n  [audit] now: ok\nnow -> "1970-01-01T00:00:00.000Z"')
    expect(out).toContain('visible after unload: []\nnow -> UNKNOWN_TOOL')
  },
  'errors.ts': (out) => {
    expect(out).toContain('INVALID_ARGS: The arguments do not match')
    expect(out).toContain('INVALID_REGISTRATION: ToolRegistrationError')
    expect(out).toContain(
      'INVALID_CONFIG at TimeoutPolicy config.defaultTimeoutMs: expected a positive finite number, got -1',
    )
  },
  // issue 25: the testing kit's fake server and scripted model, and streamModelLoop's events.
  'testing-your-agent.ts': (out) => {
    expect(out).toContain('fake server: done, 148 tokens, 2 requests')
    expect(out).toContain(
      'streamed: model-request > tool-call-delta > model-response > tool-start > tool-result > step-end > ' +
        'model-request > text-delta > model-response > step-end > done',
    )
    expect(out).toContain('scripted: done after 2 steps')
  },
  'streaming.ts': (out) => {
    expect(out).toContain('A word count: use the tool.Let me count.\n[count_words({"text":"the quick brown fox"})]')
    expect(out).toContain('count_words running (counting) -> 4\n')
    expect(out).toContain('-- step 0: 15 tokens\nFour words.\n-- step 1: 15 tokens\nstop: done, 30 tokens in all')
  },
  'tool-search.ts': (out) => {
    expect(out).toContain('listed: get_time,search_tools')
    expect(out).toContain('search: github__merge_pull_request')
    expect(out).toContain('listed now: github__merge_pull_request,get_time,search_tools')
    expect(out).toContain('program returned: {"result":"github__create_issue #7 done"')
    expect(out).toContain(
      'anthropic tools: get_time,github__merge_pull_request,github__create_issue,tool_search_tool_bm25',
    )
    expect(out).toContain(
      'tool search: native (anthropic), 2 deferred tool(s) sent to load on demand instead of search_tools',
    )
    // Issue 41: why a match matched, and a ranker of one's own fused with the built-in one.
    expect(out).toContain('why: name:merg<-merge (word), name:pull<-pr (synonym), name:request<-pr (synonym),')
    expect(out).toContain('ranker: ci__deploy')
  },
  'use-mcp-server.ts': (out) => {
    expect(out).toContain('registered: calc__add, calc__word_count')
    expect(out).toContain('calc__add: ok 20 + 22 = 42')
    expect(out).toContain('calc__word_count: TOOL_DENIED')
  },
  'openai-agents.ts': (out) => {
    expect(out).toContain('interrupted: clear_cache {"dir":".cache"}')
    expect(out.match(/tool ran: clear_cache \.cache/g)).toHaveLength(1)
    expect(out).toContain('answer: Cleared .cache: the disk had 91% used.')
  },
}

describe.concurrent('examples run against the built package', () => {
  it('every example file is covered', () => {
    const files = readdirSync(new URL('../examples/', import.meta.url)).filter((file) => file.endsWith('.ts'))
    const covered = [
      ...Object.keys(expectations),
      'connect-a-model.ts',
      'serve-mcp.ts',
      // Covered by their own tests: test/readme.test.ts, test/scheduling/demo.test.ts, test/providers/openai-agent-example.test.ts,
      // test/guide/build-a-coding-agent.test.ts (which runs the page's code, the same program).
      'readme.ts',
      'demo.ts',
      'openai-agent.ts',
      'coding-agent.ts',
    ]
    expect(files.sort()).toEqual(covered.sort())
  })

  it.each(Object.keys(expectations))('%s', async (example) => {
    expectations[example](await run(example))
  })

  it('connect-a-model.ts talks to an OpenAI-compatible server', async () => {
    const { server, bodies } = await chatServer([[['t1', 'get_time', '{"city":"Lisbon"}']], 'It is 12:00 in Lisbon.'])
    servers.push(server)
    const out = await run('connect-a-model.ts', {
      OPENAI_BASE_URL: `${server.url}/v1`,
      OPENAI_API_KEY: 'test-key',
      MODEL: 'fake-model',
    })
    expect(server.violations).toEqual([])
    expect(out).toContain('→ get_time {"city":"Lisbon"}')
    expect(out).toContain('stop: done\nIt is 12:00 in Lisbon.')
    expect(bodies[0].model).toBe('fake-model')
    expect(bodies[0].tools?.map((tool) => (tool.type === 'function' ? tool.function.name : ''))).toEqual(['get_time'])
    expect(JSON.stringify(bodies[1].messages)).toMatch(/Lisbon: \d\d:\d\d/)
  })
})
