// toolgate/providers/openai-agents: OpenAI Agents JS (`@openai/agents`) function tools over ctx.tools.
export { type AgentsToolsOptions, type AgentsToolsRuntime, toAgentsTools } from '../openai-agents.js'
