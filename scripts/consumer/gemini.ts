// Compiled with only `@google/genai` installed.
import { type Content, GoogleGenAI } from '@google/genai'
import { createToolRuntime } from 'toolgate'
import { parseToolCalls, runModelLoop, toProviderTools } from 'toolgate/providers'
import { geminiModel } from 'toolgate/providers/gemini'

export async function gemini(): Promise<Content[]> {
  await using runtime = await createToolRuntime()
  const client = new GoogleGenAI({ apiKey: 'none' })
  const result = await runModelLoop({
    tools: runtime.tools,
    model: geminiModel({ client, model: 'gemini-2.5-flash' }),
    messages: [{ role: 'user', parts: [{ text: 'hi' }] }],
  })
  const response = await client.models.generateContent({
    model: 'gemini-2.5-flash',
    contents: result.messages,
    config: { tools: toProviderTools('gemini', runtime.tools.schemas()).tools },
  })
  void parseToolCalls('gemini', response)
  return result.messages
}
