/**
 * A stand-in for a real model, for examples that must run offline: it answers each request with
 * the next entry of a script, either tool calls or a final text, in OpenAI Chat Completions
 * format. Swap it for `openAIChatModel({ client, model })` (see examples/connect-a-model.ts).
 */
import type { ProviderModel } from 'toolgate/providers'

/** One scripted reply: the calls the model makes, or its final answer. */
export type ScriptedReply =
  | string
  | ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: object }>

export function scriptedModel(script: readonly ScriptedReply[]): ProviderModel<'openai-chat'> {
  let next = 0
  return {
    format: 'openai-chat',
    async generate() {
      const reply = script[next++] ?? 'Done.'
      if (typeof reply === 'string') return { messages: [{ role: 'assistant', content: reply }], calls: [] }
      const toolCalls = reply.map(({ id, name, args }) => ({
        id,
        type: 'function' as const,
        function: { name, arguments: JSON.stringify(args) },
      }))
      const calls = reply.map(({ id, name, args }) => ({
        callId: id,
        name,
        arguments: JSON.parse(JSON.stringify(args)),
      }))
      return { messages: [{ role: 'assistant', content: null, tool_calls: toolCalls }], calls }
    },
  }
}
