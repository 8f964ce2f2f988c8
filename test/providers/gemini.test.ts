// Wire test: the official `@google/genai` client, generateContent, against a local fake (issue #12).
import { type Candidate, type Content, GoogleGenAI, type Part, type Tool } from '@google/genai'
import { describe, expect } from 'vitest'
import { geminiModel } from '../../src/providers/gemini/index.js'
import { expectWire, startFakeServer } from './fake-server.js'
import { PNG, TURN_ONE } from './scenario.js'
import { type Turn, type WireHarness, wireSuite } from './wire-suite.js'

/** The generateContent request body as it travels (the SDK's own Content and Tool shapes). */
interface WireRequest {
  contents: Content[]
  tools?: Tool[]
}

function args(text: string): Record<string, unknown> | string {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function reply(turn: Turn): { candidates: Candidate[] } {
  const parts: Part[] =
    typeof turn === 'string'
      ? [{ text: turn }]
      : // Malformed argument text reaches the client as a string where an object belongs.
        turn.map(([id, name, raw]) => ({ functionCall: { id, name, args: args(raw) as Record<string, unknown> } }))
  return {
    candidates: [{ index: 0, content: { role: 'model', parts }, finishReason: 'STOP' as Candidate['finishReason'] }],
  }
}

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp']

/**
 * What the real API validates: a model turn with N functionCall parts is followed by a user turn
 * with N functionResponse parts answering them (by id when ids were given, by name); args and
 * response are objects; inline data is base64 of a supported type.
 */
function validateContents(contents: Content[]): void {
  contents.forEach((content, i) => {
    const parts = content.parts ?? []
    expectWire(parts.length > 0, `contents[${i}].parts: must not be empty`)
    for (const part of parts) {
      if (part.functionCall)
        expectWire(typeof part.functionCall.args === 'object', `contents[${i}]: functionCall.args must be an object`)
      const response = part.functionResponse
      if (response) {
        expectWire(
          typeof response.response === 'object' && response.response !== null,
          `contents[${i}]: response object`,
        )
        for (const inner of response.parts ?? [])
          expectWire(IMAGE_TYPES.includes(inner.inlineData?.mimeType ?? ''), `contents[${i}]: bad inline data`)
      }
    }
    const calls = parts.filter((p) => p.functionCall).map((p) => p.functionCall!)
    if (content.role !== 'model' || calls.length === 0) return
    const next = contents[i + 1]
    expectWire(next?.role === 'user', `contents[${i + 1}]: a user turn with function responses expected`)
    const responses = (next.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse!)
    expectWire(
      responses.length === calls.length,
      `contents[${i + 1}]: ${responses.length} function response parts for ${calls.length} function call parts`,
    )
    for (const call of calls) {
      const count = responses.filter((r) => r.id === call.id && r.name === call.name).length
      expectWire(count === 1, `functionCall ${call.id} answered ${count} times`)
    }
  })
}

const harness: WireHarness<'gemini'> = {
  userMessage: { role: 'user', parts: [{ text: 'go' }] },
  async start(script) {
    let next = 0
    const bodies: WireRequest[] = []
    const server = await startFakeServer(
      (request) => {
        expectWire(
          // @google/genai 2 calls v1beta, 3 calls v1 (issue 42).
          request.method === 'POST' && /^\/v1(?:beta)?\/models\/fake:generateContent$/.test(request.path),
          `unexpected ${request.method} ${request.path}`,
        )
        expectWire(request.headers['x-goog-api-key'] === 'test-key', 'missing x-goog-api-key')
        const body = request.body as WireRequest
        bodies.push(body)
        validateContents(body.contents)
        const turn = script[next++]
        expectWire(turn !== undefined, 'more requests than scripted')
        return { body: reply(turn) }
      },
      (message) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }),
    )
    const client = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: server.url } })
    return {
      server,
      bodies,
      model: geminiModel({ client, model: 'fake' }),
      replay: (contents) => client.models.generateContent({ model: 'fake', contents }),
    }
  },
  checkAnswers(raw) {
    const body = raw as WireRequest
    const declarations = body.tools?.[0]?.functionDeclarations ?? []
    expect(declarations.find((d) => d.name === 'search')).toEqual({
      name: 'search',
      description: 'Search, optionally limited.',
      parametersJsonSchema: {
        type: 'object',
        properties: { query: { type: 'string' }, limit: { type: 'integer', description: 'at most this many hits' } },
        required: ['query'],
      },
    })
    expect(body.contents).toHaveLength(3)
    const answer = body.contents[2]
    expect(answer.role).toBe('user')
    const responses = (answer.parts ?? []).map((p) => p.functionResponse!)
    expect(responses.map((r) => [r.id, r.name])).toEqual(TURN_ONE.map(([id, name]) => [id, name]))
    const byId = Object.fromEntries(responses.map((r) => [r.id, r]))
    expect(byId.c1.response).toEqual({ output: 'contents of a.txt' })
    expect(byId.c5.response).toEqual({ error: 'kaboom', code: 'TOOL_ERROR' })
    expect(byId.c6.response).toMatchObject({ code: 'TOOL_DENIED' })
    expect(byId.c7.response).toMatchObject({ code: 'INVALID_ARGS' })
    expect(byId.c4).toEqual({
      id: 'c4',
      name: 'snapshot',
      response: { output: 'a screenshot\n[image (image/png) #1: attached to this response]' },
      parts: [{ inlineData: { mimeType: 'image/png', data: PNG } }],
    })
  },
}

describe('gemini through the official client (issue #12)', () => {
  wireSuite(harness)
})
