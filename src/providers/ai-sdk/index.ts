// toolgate/providers/ai-sdk: a Vercel AI SDK (`ai`) tool set over ctx.tools.
export { type AiSdkToolsOptions, type AiSdkToolsRuntime, toAiSdkTools } from '../ai-sdk.js'
