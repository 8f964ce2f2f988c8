// Format 'anthropic': the Anthropic Messages API (tool_use blocks, tool_result blocks with is_error).
import type Anthropic from '@anthropic-ai/sdk'
import type { ContentBlock } from '../contract/content.js'
import type { ToolSchema } from '../contract/tool-definition.js'
import type { FormatModule } from './format-module.js'
import { deferredMessages, EMPTY_RESULT, imagePlaceholder, isPortableImage, modelBlocks } from './result-content.js'
import { asArray, record, toolCall } from './tool-calls.js'
import type { ProviderTool, ProviderToolCall } from './types.js'

type Block = Anthropic.Messages.TextBlockParam | Anthropic.Messages.ImageBlockParam
type ImageMediaType = Anthropic.Messages.Base64ImageSource['media_type']

/** The tool search tool toolgate sends for a native search: natural-language queries, as search_tools takes. */
export const ANTHROPIC_TOOL_SEARCH: Anthropic.Messages.ToolSearchToolBm25_20251119 = Object.freeze({
  type: 'tool_search_tool_bm25_20251119',
  name: 'tool_search_tool_bm25',
})

function anthropicTool({ name, description, parameters }: ToolSchema): Anthropic.Messages.Tool {
  return { name, description, input_schema: parameters as unknown as Anthropic.Messages.Tool.InputSchema }
}

export const anthropicFormat: FormatModule<'anthropic'> = {
  hasStrictMode: false,

  toTools(schemas) {
    return { tools: schemas.map(anthropicTool), downgrades: [] }
  },

  nativeSearch(schemas, deferred) {
    // The API searches the deferred tools server-side and answers with tool_reference blocks; a
    // discovered tool is then called with an ordinary tool_use block.
    const tools: ProviderTool<'anthropic'>[] = schemas.map(anthropicTool)
    for (const schema of deferred) tools.push({ ...anthropicTool(schema), defer_loading: true })
    tools.push({ ...ANTHROPIC_TOOL_SEARCH })
    return { tools, downgrades: [] }
  },

  parseToolCalls(response, nullableSchemas) {
    const calls: ProviderToolCall[] = []
    for (const entry of asArray(record(response)?.content)) {
      const block = record(entry)
      if (block?.type !== 'tool_use') continue
      calls.push(toolCall(String(block.id ?? ''), String(block.name ?? ''), block.input, nullableSchemas))
    }
    return calls
  },

  toMessages(batch) {
    const content: Anthropic.Messages.ContentBlockParam[] = []
    for (const { call, result } of batch.results) {
      const blocks = anthropicBlocks(result.content)
      const toolResult: Anthropic.Messages.ToolResultBlockParam = {
        type: 'tool_result',
        tool_use_id: call.callId,
        content: blocks.length > 0 ? blocks : [{ type: 'text', text: EMPTY_RESULT }],
      }
      if (result.isError) toolResult.is_error = true
      content.push(toolResult)
    }
    // tool_result blocks must open the user turn; deferred context follows them in the same turn.
    for (const context of deferredMessages(batch.results)) content.push(...anthropicBlocks(context.content))
    return content.length > 0 ? [{ role: 'user', content }] : []
  },
}

/** Text and images as Anthropic blocks (empty text dropped: the API rejects empty text blocks). */
function anthropicBlocks(content: readonly ContentBlock[]): Block[] {
  const out: Block[] = []
  for (const block of modelBlocks(content)) {
    if (block.type === 'text') {
      if (block.text !== '') out.push({ type: 'text', text: block.text })
    } else if (isPortableImage(block)) {
      out.push({
        type: 'image',
        source: { type: 'base64', media_type: block.mediaType as ImageMediaType, data: block.data },
      })
    } else out.push({ type: 'text', text: imagePlaceholder(block) })
  }
  return out
}
