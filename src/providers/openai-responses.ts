// Format 'openai-responses': the OpenAI Responses API (function tools, function_call_output items).
import type OpenAI from 'openai'
import type { ContentBlock } from '../contract/content.js'
import type { FormatModule } from './format-module.js'
import { type OpenAIFunction, openAITools } from './openai-tools.js'
import {
  dataUrl,
  deferredMessages,
  EMPTY_RESULT,
  errorPrefix,
  imagePlaceholder,
  isPortableImage,
  joinText,
  modelBlocks,
} from './result-content.js'
import { asArray, customCall, record, toolCall, wireArguments, wireInput } from './tool-calls.js'
import type { ProviderTool, ProviderToolCall } from './types.js'

type InputItem = OpenAI.Responses.ResponseInputItem
type OutputPart = OpenAI.Responses.ResponseFunctionCallOutputItem
type MessagePart = OpenAI.Responses.ResponseInputContent

export const openAIResponsesFormat: FormatModule<'openai-responses'> = {
  hasStrictMode: true,

  toTools(schemas, strict) {
    return openAITools(schemas, strict, responsesFunction)
  },

  nativeSearch(schemas, deferred, strict) {
    // The hosted tool_search loads deferred functions into the conversation (tool_search_output
    // items); a loaded function is then called with an ordinary function_call item.
    const listed = openAITools(schemas, strict, responsesFunction)
    const onDemand = openAITools(deferred, strict, (fn) => ({ ...responsesFunction(fn), defer_loading: true }))
    const tools: ProviderTool<'openai-responses'>[] = [...listed.tools, ...onDemand.tools, { type: 'tool_search' }]
    return { tools, downgrades: [...listed.downgrades, ...onDemand.downgrades] }
  },

  parseToolCalls(response, nullAbsent) {
    const calls: ProviderToolCall[] = []
    for (const entry of asArray(record(response)?.output)) {
      const item = record(entry)
      if (item?.type === 'function_call')
        calls.push(toolCall(String(item.call_id ?? ''), String(item.name ?? ''), item.arguments, nullAbsent))
      // A custom tool call needs its custom_tool_call_output, or the next request is rejected.
      else if (item?.type === 'custom_tool_call')
        calls.push(customCall(String(item.call_id ?? ''), String(item.name ?? ''), item.type))
    }
    return calls
  },

  toMessages(batch) {
    const items: InputItem[] = []
    for (const { call, result } of batch.results) {
      const prefix = errorPrefix(result)
      if (call.kind === 'custom') {
        // custom_tool_call_output takes text only.
        const text = joinText(result.content, (block) => imagePlaceholder(block))
        items.push({ type: 'custom_tool_call_output', call_id: call.callId, output: `${prefix}${text}` })
        continue
      }
      const hasImage = modelBlocks(result.content).some((block) => block.type === 'image' && isPortableImage(block))
      if (!hasImage) {
        const text = joinText(result.content, (block) => imagePlaceholder(block))
        items.push({ type: 'function_call_output', call_id: call.callId, output: `${prefix}${text}` })
        continue
      }
      // The output list carries images natively (input_image beside input_text).
      const output: OutputPart[] = []
      if (prefix !== '') output.push({ type: 'input_text', text: prefix.trimEnd() })
      output.push(...(parts(result.content) as OutputPart[]))
      items.push({ type: 'function_call_output', call_id: call.callId, output })
    }
    for (const context of deferredMessages(batch.results)) {
      const content = parts(context.content)
      items.push({
        type: 'message',
        role: 'user',
        content: content.length > 0 ? content : [{ type: 'input_text', text: EMPTY_RESULT }],
      })
    }
    return items
  },
}

function responsesFunction({ name, description, parameters, strict }: OpenAIFunction): OpenAI.Responses.FunctionTool {
  return { type: 'function', name, description, parameters, strict }
}

function parts(content: readonly ContentBlock[]): MessagePart[] {
  const out: MessagePart[] = []
  for (const block of modelBlocks(content)) {
    if (block.type === 'text') {
      if (block.text !== '') out.push({ type: 'input_text', text: block.text })
    } else if (isPortableImage(block)) out.push({ type: 'input_image', image_url: dataUrl(block), detail: 'auto' })
    else out.push({ type: 'input_text', text: imagePlaceholder(block) })
  }
  return out
}

/**
 * A response's output items as the next request must carry them: call items get a string
 * `call_id` and `name` (what `parseToolCalls` answers) and their arguments / input as a string,
 * whatever type the server sent; every other item goes back as it came (reasoning included).
 */
export function replyItems(output: readonly unknown[]): InputItem[] {
  return output.map((entry) => {
    const item = record(entry)
    if (item?.type === 'function_call')
      return {
        ...item,
        call_id: String(item.call_id ?? ''),
        name: String(item.name ?? ''),
        arguments: wireArguments(item.arguments),
      } as unknown as InputItem
    if (item?.type === 'custom_tool_call')
      return {
        ...item,
        call_id: String(item.call_id ?? ''),
        name: String(item.name ?? ''),
        input: wireInput(item.input),
      } as unknown as InputItem
    return entry as InputItem
  })
}
