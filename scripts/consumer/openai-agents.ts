// Compiled with only `@openai/agents` installed: the tools are the Agents SDK's own function tools.
import { Agent } from '@openai/agents'
import { createAgent, createToolRuntime } from 'toolgate'
import { toAgentsTools } from 'toolgate/providers/openai-agents'

export async function agents(): Promise<Agent> {
  const { ctx, tools } = await createToolRuntime()
  const scope = createAgent(ctx, { id: 'agents' })
  return new Agent({ name: 'helper', instructions: 'Use the tools.', tools: toAgentsTools(tools, { agent: scope }) })
}
