// Compiled with only `ai` installed.
import { generateText, type LanguageModel, stepCountIs } from 'ai'
import { createToolRuntime } from 'toolgate'
import { toAiSdkTools } from 'toolgate/providers/ai-sdk'

export async function aiSdk(model: LanguageModel): Promise<string> {
  await using runtime = await createToolRuntime()
  const { text } = await generateText({
    model,
    tools: toAiSdkTools(runtime.tools),
    stopWhen: stepCountIs(5),
    prompt: 'hi',
  })
  return text
}
