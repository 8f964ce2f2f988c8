// The SDK-free entry points, compiled in every consumer: with no provider SDK installed and with
// each one alone. Nothing here may need an optional peer's types.

import { createToolRuntime } from 'toolgate'
import { CodeMode, jsonSchemaToTs } from 'toolgate/code-mode'
import { type ConnectMcpServerOptions, createMcpServer, type McpConnection } from 'toolgate/mcp'
import {
  type ModelLoopResult,
  type ProviderMessage,
  type ProviderModel,
  type ProviderResponse,
  parseToolCalls,
  runModelLoop,
  toProviderMessages,
  toProviderTools,
} from 'toolgate/providers'
import { createFileStore, createPostgresStore, SCHEMA_VERSION, type Store } from 'toolgate/store'
import { type ScriptedTurn, scriptedModel, startFakeProvider } from 'toolgate/testing'

declare const response: ProviderResponse<'openai-chat'>

// A hand-written model: the loop's types do not depend on any SDK.
const model: ProviderModel<'openai-chat'> = {
  format: 'openai-chat',
  async generate() {
    return { messages: [{ role: 'assistant', content: 'done' }], calls: [] }
  },
}

export async function providers(): Promise<ModelLoopResult<'openai-chat'>> {
  await using runtime = await createToolRuntime()
  const { tools, downgrades } = toProviderTools('anthropic', runtime.tools.schemas())
  const first: string[] = downgrades
  void first
  void tools
  const calls = parseToolCalls('openai-chat', response)
  const replies: ProviderMessage<'gemini'>[] = toProviderMessages('gemini', { results: [] })
  void calls
  void replies
  return runModelLoop({ tools: runtime.tools, model, messages: [{ role: 'user', content: 'hi' }] })
}

export const typeOnly: [ConnectMcpServerOptions?, McpConnection?] = []
export const plugin: typeof CodeMode = CodeMode
export const server: typeof createMcpServer = createMcpServer
export const ts: string = jsonSchemaToTs({ type: 'string' })

// The testing kit and the store name no SDK and no pg type.
export async function kitAndStore(): Promise<number> {
  const turns: ScriptedTurn[] = [{ text: 'hi' }]
  const scripted = scriptedModel({ format: 'anthropic', turns })
  void scripted.requests
  const fake = await startFakeProvider({ format: 'openai-chat', turns })
  await fake.close()
  const stores: Store[] = [
    createFileStore({ journal: 'session.jsonl' }),
    await createPostgresStore({ connectionString: 'postgres://x' }),
  ]
  void stores
  return SCHEMA_VERSION
}
