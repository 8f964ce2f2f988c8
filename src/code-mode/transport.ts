import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolRuntimeCore, ToolTransport } from '../runtime/index.js'
import type { CodeRuntime } from './code-runtime.js'
import { RUN_CODE_NAME } from './constants.js'
import { logCodeDispatch } from './dispatch-log.js'
import { type CodeModeOptions, createRunCodeDefinition } from './run-code.js'
import { renderToolsSdk } from './sdk.js'

/** The SDK text derives from a resolved view's map, so it is cached exactly as long as that view lives. */
const sdkCache = new WeakMap<ReadonlyMap<string, ToolDefinition>, string>()

/** The Code Mode SDK of a set of visible tools (`run_code` itself excluded). */
export function sdkOf(visible: ReadonlyMap<string, ToolDefinition>): string {
  let text = sdkCache.get(visible)
  if (text === undefined) {
    const entries = []
    for (const definition of visible.values()) {
      if (definition.name === RUN_CODE_NAME) continue
      entries.push({
        name: definition.name,
        description: definition.description,
        parameters: definition.parameters,
        outputSchema: definition.output.schema,
      })
    }
    text = renderToolsSdk(entries)
    sdkCache.set(visible, text)
  }
  return text
}

/** Code Mode as the core's transport: `run_code` over `runtime`, its SDK in the description. */
export function createCodeModeTransport(
  tools: ToolRuntimeCore,
  runtime: CodeRuntime,
  options: CodeModeOptions | undefined,
): ToolTransport {
  const definition = createRunCodeDefinition(
    {
      execute: (input) => tools.execute(input),
      executionMode: (input) => tools.executionMode(input),
      logDispatch: (log) => logCodeDispatch(tools.host, log),
    },
    {
      runtime,
      ...(options?.maxParallelSubCalls === undefined ? {} : { maxParallelSubCalls: options.maxParallelSubCalls }),
      ...(options?.description === undefined ? {} : { description: options.description }),
    },
  )
  return {
    definition,
    describe: (visible) => `${definition.description}\n\nSDK available inside the program:\n\n${sdkOf(visible)}`,
    redirect: (name) =>
      `this agent presents its tools through Code Mode; call tools.${name}(args) from inside a ${RUN_CODE_NAME} program`,
  }
}
