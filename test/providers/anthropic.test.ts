// Wire test: the official `@anthropic-ai/sdk` client, Messages API, against a local fake (issue #12).
import Anthropic from '@anthropic-ai/sdk'
import type {
  ContentBlock,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages'
import { describe, expect } from 'vitest'
import { anthropicModel } from '../../src/providers/anthropic/index.js'
import { expectWire, startFakeServer } from './fake-server.js'
import { PNG, TURN_ONE } from './scenario.js'
import { type Turn, type WireHarness, wireSuite } from './wire-suite.js'

/** Valid argument JSON goes out as the object the real API sends; malformed text as a string. */
function input(args: string): unknown {
  try {
    return JSON.parse(args)
  } catch {
    return args
  }
}

function message(turn: Turn, n: number): Message {
  const content: ContentBlock[] =
    typeof turn === 'string'
      ? [{ type: 'text', text: turn, citations: null }]
      : turn.map(([id, name, args]) => ({ type: 'tool_use', id, name, input: input(args), caller: { type: 'direct' } }))
  return {
    id: `msg_${n}`,
    type: 'message',
    role: 'assistant',
    model: 'fake',
    content,
    container: null,
    diagnostics: null,
    stop_details: null,
    stop_reason: typeof turn === 'string' ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: {
      input_tokens: 1,
      output_tokens: 1,
      cache_creation: null,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: null,
      speed: null,
    },
  }
}

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp']

/**
 * What the real API validates: each assistant tool_use is answered by exactly one tool_result in
 * the immediately following user message, whose tool_result blocks come first; tool_use input is
 * an object; text blocks are non-empty; images are base64 of a supported type.
 */
function validateMessages(messages: MessageParam[]): void {
  messages.forEach((m, i) => {
    if (typeof m.content === 'string') return
    for (const block of m.content) {
      if (block.type === 'text') expectWire(block.text !== '', `messages[${i}]: text blocks must be non-empty`)
      if (block.type === 'tool_use')
        expectWire(
          typeof block.input === 'object' && block.input !== null,
          `messages[${i}]: tool_use input must be an object`,
        )
      if (block.type === 'tool_result' && Array.isArray(block.content)) {
        for (const inner of block.content) {
          if (inner.type === 'text') expectWire(inner.text !== '', `messages[${i}]: empty text in tool_result`)
          if (inner.type === 'image')
            expectWire(
              inner.source.type === 'base64' && IMAGE_TYPES.includes(inner.source.media_type),
              `messages[${i}]: bad image`,
            )
        }
      }
    }
    const uses = m.role === 'assistant' ? m.content.filter((b) => b.type === 'tool_use') : []
    if (uses.length === 0) return
    const next = messages[i + 1]
    expectWire(next?.role === 'user' && Array.isArray(next.content), `messages[${i + 1}]: tool_result blocks expected`)
    const content = next.content as Exclude<MessageParam['content'], string>
    const lead = content.findIndex((b) => b.type !== 'tool_result')
    const results = (lead === -1 ? content : content.slice(0, lead)) as ToolResultBlockParam[]
    expectWire(
      content.slice(results.length).every((b) => b.type !== 'tool_result'),
      `messages[${i + 1}]: tool_result blocks must come first`,
    )
    for (const use of uses) {
      const id = (use as { id: string }).id
      const count = results.filter((r) => r.tool_use_id === id).length
      expectWire(count === 1, `tool_use ${id} answered ${count} times`)
    }
    expectWire(results.length === uses.length, `messages[${i + 1}]: tool_result for an unknown tool_use`)
  })
}

const harness: WireHarness<'anthropic'> = {
  userMessage: { role: 'user', content: 'go' },
  async start(script) {
    let next = 0
    const bodies: MessageCreateParamsNonStreaming[] = []
    const server = await startFakeServer(
      (request) => {
        expectWire(request.method === 'POST' && request.path === '/v1/messages', `unexpected ${request.path}`)
        const { authorization, 'x-api-key': key } = request.headers
        expectWire(key === 'test-key' || authorization === 'Bearer test-key', 'missing API key')
        expectWire(typeof request.headers['anthropic-version'] === 'string', 'missing anthropic-version')
        const body = request.body as MessageCreateParamsNonStreaming
        bodies.push(body)
        expectWire(Number.isInteger(body.max_tokens), 'max_tokens is required')
        validateMessages(body.messages)
        const turn = script[next++]
        expectWire(turn !== undefined, 'more requests than scripted')
        return { body: message(turn, next) }
      },
      (text) => ({ type: 'error', error: { type: 'invalid_request_error', message: text } }),
    )
    const client = new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 })
    return {
      server,
      bodies,
      model: anthropicModel({ client, model: 'fake' }),
      replay: (messages) => client.messages.create({ model: 'fake', max_tokens: 16, messages }),
    }
  },
  checkAnswers(raw) {
    const body = raw as MessageCreateParamsNonStreaming
    expect(body.tools?.find((t) => 'name' in t && t.name === 'search')).toEqual({
      name: 'search',
      description: 'Search, optionally limited.',
      input_schema: {
        type: 'object',
        properties: { query: { type: 'string' }, limit: { type: 'integer', description: 'at most this many hits' } },
        required: ['query'],
      },
    })
    expect(body.messages).toHaveLength(3)
    const answer = body.messages[2]
    expect(answer.role).toBe('user')
    const results = answer.content as ToolResultBlockParam[]
    expect(results.map((r) => [r.type, r.tool_use_id])).toEqual(TURN_ONE.map(([id]) => ['tool_result', id]))
    const byId = Object.fromEntries(results.map((r) => [r.tool_use_id, r]))
    expect(byId.c1).toEqual({
      type: 'tool_result',
      tool_use_id: 'c1',
      content: [{ type: 'text', text: 'contents of a.txt' }],
    })
    expect(byId.c5).toEqual({
      type: 'tool_result',
      tool_use_id: 'c5',
      is_error: true,
      content: [{ type: 'text', text: 'kaboom' }],
    })
    expect(byId.c6.is_error).toBe(true)
    expect(byId.c7.is_error).toBe(true)
    expect(byId.c4.content).toEqual([
      { type: 'text', text: 'a screenshot' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ])
    // The malformed call's input went back as an object, as the API demands.
    const assistant = body.messages[1].content as ContentBlock[]
    expect(assistant.find((b) => b.type === 'tool_use' && b.id === 'c7')).toMatchObject({ input: {} })
  },
}

describe('anthropic through the official client (issue #12)', () => {
  wireSuite(harness)
})
