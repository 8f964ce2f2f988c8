// The 2026-07-28 leg of `serve --http` classifies each request without building a web Request
// (issue 35, Performance: the 2026 path's per-call cost): its answer must be the SDK's own
// isLegacyRequest answer for every shape of request the endpoint can get.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server'
import { describe, expect, it } from 'vitest'
import { isModernRequest } from '../../src/mcp/server/inbound-era.js'

const envelope = (version = '2026-07-28') => ({
  [PROTOCOL_VERSION_META_KEY]: version,
  [CLIENT_INFO_META_KEY]: { name: 'c', version: '1' },
  [CLIENT_CAPABILITIES_META_KEY]: {},
})
const call = (meta?: unknown) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'echo', arguments: { message: 'x' }, ...(meta === undefined ? {} : { _meta: meta }) },
})
const modernHeaders = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' }

const cases: Array<[string, string, Record<string, string | string[]>, unknown]> = [
  [
    'initialize',
    'POST',
    {},
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    },
  ],
  ['a 2025 session call', 'POST', { 'mcp-session-id': 's', 'mcp-protocol-version': '2025-11-25' }, call()],
  ['a 2026 call', 'POST', modernHeaders, call(envelope())],
  ['a 2026 call naming an unserved revision', 'POST', modernHeaders, call(envelope('2099-01-01'))],
  ['a 2026 header without the envelope', 'POST', modernHeaders, call()],
  ['a malformed envelope', 'POST', modernHeaders, call({ [PROTOCOL_VERSION_META_KEY]: 7 })],
  ['Mcp-Method against the body', 'POST', { ...modernHeaders, 'mcp-method': 'tools/list' }, call(envelope())],
  ['Mcp-Name repeated', 'POST', { ...modernHeaders, 'mcp-name': ['echo', 'echo'] }, call(envelope())],
  ['a claim without headers', 'POST', {}, call(envelope())],
  [
    'server/discover',
    'POST',
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
    { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } },
  ],
  ['a claim-less server/discover', 'POST', {}, { jsonrpc: '2.0', id: 1, method: 'server/discover' }],
  ['a 2025 notification', 'POST', { 'mcp-session-id': 's' }, { jsonrpc: '2.0', method: 'notifications/initialized' }],
  [
    'a notification under a 2026 header',
    'POST',
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'notifications/cancelled' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
  ],
  ['a batch', 'POST', {}, [call(), call()]],
  ['a posted response', 'POST', { 'mcp-session-id': 's' }, { jsonrpc: '2.0', id: 1, result: {} }],
  ['a GET stream', 'GET', { 'mcp-session-id': 's' }, undefined],
  ['a DELETE', 'DELETE', { 'mcp-session-id': 's' }, undefined],
]

describe('isModernRequest', () => {
  it.each(cases)('agrees with the SDK on %s', async (_label, method, headers, body) => {
    const web = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' })
    for (const [key, value] of Object.entries(headers))
      for (const one of Array.isArray(value) ? value : [value]) web.append(key, one)
    const request = new Request('http://127.0.0.1/mcp', {
      method,
      headers: web,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const legacy = await isLegacyRequest(request, body)
    expect(isModernRequest({ method, headers }, body)).toBe(!legacy)
  })

  it('routes a 2026 call to the 2026 path and a session call to the 2025 one', () => {
    expect(isModernRequest({ method: 'POST', headers: modernHeaders }, call(envelope()))).toBe(true)
    expect(isModernRequest({ method: 'POST', headers: { 'mcp-session-id': 's' } }, call())).toBe(false)
  })
})
