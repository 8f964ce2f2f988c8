// The guide's factual claims, each checked against the code (issue 25 item 7): when one stops
// being true, this fails and names the page to fix.
import { readFileSync } from 'node:fs'
import { generateText } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { ToolgateError } from '../src/errors/toolgate-error.js'
import { ADVERTISED_IDLE_SECONDS, IDLE_CONNECTION_MS } from '../src/gateway/http-keep-alive.js'
import { createToolRuntime } from '../src/preset/create.js'
import { ToolRuntime } from '../src/preset/tool-runtime.js'
import { toAiSdkTools } from '../src/providers/ai-sdk/index.js'
import { toProviderTools } from '../src/providers/index.js'
import { ResultBudget } from '../src/scheduling/result-budget.js'
import { terminalApproval } from '../src/scheduling/terminal-approval.js'
import { defineTool } from '../src/schema/define-tool.js'

const page = (path: string) => readFileSync(new URL(`../docs/${path}`, import.meta.url), 'utf8')

async function budgetError(maxBytes: number): Promise<unknown> {
  const ctx = new Context()
  await ctx.plugin(ToolRuntime, {})
  try {
    await ctx.plugin(ResultBudget, { maxBytes })
    return undefined
  } catch (error) {
    return error
  } finally {
    await ctx.fiber.dispose()
  }
}

describe("the guide's claims", () => {
  it('errors.md: a bad option or argument throws a ToolgateError (INVALID_CONFIG) whose message starts with its path', async () => {
    expect(page('guide/errors.md')).toContain('code `INVALID_CONFIG`')
    const thrown: unknown[] = []
    const attempt = async (run: () => unknown) => {
      try {
        await run()
        thrown.push(undefined)
      } catch (error) {
        thrown.push(error)
      }
    }
    await attempt(() => createToolRuntime({ defaultTimeoutMs: -1 }))
    await attempt(() => toProviderTools('nope' as 'gemini', []))
    await attempt(() => terminalApproval({ maxValueChars: 1 }))
    await attempt(() => toAiSdkTools({ schemas: () => [], execute: async () => ({}) as never }, { maxParallel: -1 }))
    thrown.push(await budgetError(10))
    for (const error of thrown) {
      expect(error).toBeInstanceOf(ToolgateError)
      expect((error as ToolgateError).code).toBe('INVALID_CONFIG')
      expect((error as Error).message).toMatch(/^[\w.()', ]+: /)
    }
  })

  it('policies.md: ResultBudget maxBytes is at least 1,024 bytes', async () => {
    expect(page('guide/policies.md')).toContain('at least 1,024')
    expect(String(await budgetError(1023))).toMatch(/maxBytes.*>= 1024/)
    expect(await budgetError(1024)).toBeUndefined()
  })

  it("policies.md: block's feedback is an array of content blocks the model reads", async () => {
    expect(page('guide/policies.md')).toContain('`feedback`, an array of content blocks')
    const { ctx, tools, dispose } = await createToolRuntime()
    ctx.on('tools/post-execute', async () => ({ kind: 'block', feedback: [{ type: 'text', text: 'too much output' }] }))
    tools.register(
      defineTool({
        name: 'noisy',
        description: 'Noisy.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        execute: async () => 'x'.repeat(10),
      }),
    )
    const result = await tools.execute({
      callId: 'c',
      name: 'noisy',
      arguments: {},
      signal: new AbortController().signal,
    })
    expect(result.isError && result.error.info?.code).toBe('TOOL_BLOCKED')
    expect(JSON.stringify(result.content)).toContain('too much output')
    await dispose()
  })

  it('tools.md: an object output schema must declare additionalProperties', () => {
    expect(page('guide/tools.md')).toContain('must say `additionalProperties: true` or\n  `false`')
    const define = (schema: object) =>
      defineTool({
        name: 'o',
        description: 'O.',
        parameters: {},
        output: { schema: schema as never, render: () => [] },
        execute: async () => ({}) as never,
      })
    expect(() => define({ type: 'object', properties: {} })).toThrow(
      /output\.schema: an object spec must declare additionalProperties/,
    )
    expect(() => define({ type: 'object', properties: {}, additionalProperties: false })).not.toThrow()
  })

  it('providers.md and connect-a-model.md: generateText without stopWhen makes one step; the model never reads the results', async () => {
    expect(page('guide/providers.md')).toContain('pass `stopWhen`')
    expect(page('guide/recipes/connect-a-model.md')).toContain('stopWhen: stepCountIs(10)')
    const { tools, dispose } = await createToolRuntime()
    let ran = 0
    tools.register(
      defineTool({
        name: 'ping',
        description: 'Ping.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        execute: async () => {
          ran++
          return 'pong'
        },
      }),
    )
    let requests = 0
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        requests++
        return {
          content: [{ type: 'tool-call', toolCallId: 't1', toolName: 'ping', input: '{}' }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 1, text: 1, reasoning: 0 },
          },
          warnings: [],
        }
      },
    })
    await generateText({ model, tools: toAiSdkTools(tools), prompt: 'ping' })
    expect(ran).toBe(1)
    expect(requests).toBe(1)
    await dispose()
  })

  it('deploy.md: serve --http keeps an idle connection 65 s and advertises 5 s', () => {
    const text = page('guide/deploy.md')
    expect(text).toContain(
      `keeps an idle HTTP connection ${IDLE_CONNECTION_MS / 1000}\nseconds and tells clients ${ADVERTISED_IDLE_SECONDS}`,
    )
    expect(text).toContain(`\`Keep-Alive: timeout=${ADVERTISED_IDLE_SECONDS}\``)
    expect(text).toContain(`longer than ${IDLE_CONNECTION_MS / 1000} seconds`)
  })

  it('README.md: docs/dependencies.md explains every runtime dependency', () => {
    expect(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).toContain('docs/dependencies.md')
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    const table = page('dependencies.md')
    for (const name of Object.keys(pkg.dependencies)) expect(table, name).toContain(`| \`${name}\` |`)
  })
})
