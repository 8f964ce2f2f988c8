// The hand-written check of an upstream's `initialize` answer (serve's first listing uses it before
// the SDK loads; issue 35, Performance) against the SDK's own schema: every answer the SDK client
// refuses is refused here too, and the well-formed ones pass both.
import { InitializeResultSchema } from '@modelcontextprotocol/core'
import { describe, expect, it } from 'vitest'
import { isInitializeResult } from '../../src/mcp/protocol/initialize-answer.js'

const VERSION = '2025-11-25'
const good = {
  protocolVersion: VERSION,
  capabilities: { tools: { listChanged: true } },
  serverInfo: { name: 'up', version: '1' },
}

const passing: Record<string, unknown>[] = [
  good,
  { ...good, capabilities: {} },
  {
    ...good,
    capabilities: {
      experimental: { x: { a: 1 } },
      extensions: { 'io.example/ext': {} },
      logging: {},
      completions: {},
      prompts: { listChanged: false },
      resources: { subscribe: true, listChanged: true },
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      unknown: 'allowed',
    },
    serverInfo: {
      name: 'up',
      version: '1',
      title: 'Up',
      websiteUrl: 'https://example.com',
      description: 'd',
      icons: [{ src: 'https://example.com/i.png', mimeType: 'image/png', sizes: ['48x48'], theme: 'dark' }],
    },
    instructions: 'use it',
    _meta: { 'example.com/k': 1 },
  },
]

const failing: Record<string, unknown>[] = [
  { ...good, serverInfo: { name: 'up' } },
  { ...good, serverInfo: { version: '1' } },
  { ...good, serverInfo: { name: 'up', version: 1 } },
  { ...good, serverInfo: { ...good.serverInfo, title: null } },
  { ...good, serverInfo: { ...good.serverInfo, icons: [{ mimeType: 'image/png' }] } },
  { ...good, serverInfo: { ...good.serverInfo, icons: [{ src: 'x', theme: 'blue' }] } },
  { ...good, serverInfo: { ...good.serverInfo, icons: [{ src: 'x', sizes: [48] }] } },
  { ...good, serverInfo: undefined },
  { ...good, capabilities: undefined },
  { ...good, capabilities: [] },
  { ...good, capabilities: { tools: { listChanged: 'yes' } } },
  { ...good, capabilities: { tools: null } },
  { ...good, capabilities: { resources: { subscribe: 1 } } },
  { ...good, capabilities: { prompts: [] } },
  { ...good, capabilities: { logging: true } },
  { ...good, capabilities: { completions: [] } },
  { ...good, capabilities: { experimental: { x: 1 } } },
  { ...good, capabilities: { extensions: [] } },
  { ...good, capabilities: { tasks: { list: true } } },
  { ...good, capabilities: { tasks: { requests: { tools: { call: 1 } } } } },
  { ...good, instructions: 1 },
  { ...good, _meta: 'm' },
  { ...good, protocolVersion: 20251125 },
  { ...good, protocolVersion: undefined },
]

describe('isInitializeResult: at least as strict as the SDK client (issue 35)', () => {
  it('passes what the SDK takes', () => {
    for (const answer of passing) {
      expect(InitializeResultSchema.safeParse(answer).success).toBe(true)
      expect(isInitializeResult(answer, VERSION)).toBe(true)
    }
  })

  it('refuses what the SDK refuses', () => {
    for (const answer of failing) {
      expect(InitializeResultSchema.safeParse(answer).success, JSON.stringify(answer)).toBe(false)
      expect(isInitializeResult(answer, VERSION), JSON.stringify(answer)).toBe(false)
    }
  })

  it('refuses another version, or no object at all', () => {
    expect(isInitializeResult({ ...good, protocolVersion: '2025-06-18' }, VERSION)).toBe(false)
    for (const value of [undefined, null, [], 'x', 1]) expect(isInitializeResult(value, VERSION)).toBe(false)
  })
})
