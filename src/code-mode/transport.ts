import type { ScopeKey } from '../contract/execution.js'
import type { ToolDefinition } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import { runPipeline } from '../runtime/pipeline.js'
import { coreOf, modeOf, type ToolRuntimeCore } from '../runtime/service.js'
import type { ToolTransport } from '../runtime/transport.js'
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

/** `tools.sdk(scope)`: the SDK the scope's model sees, whatever its presentation. */
export function scopeSdk(tools: ToolRuntimeCore, scope: ScopeKey | undefined): string {
  const core = tools[coreOf]
  const resolved = core.scopeOfAgent(scope)
  if (!resolved) throw new ConfigError('tools.sdk(scope)', 'expected an Agent created by createAgent()')
  const halted = core.lifetime.halted(resolved, 'tools.sdk()')
  if (halted) throw halted
  return sdkOf(core.view(resolved).byName)
}

/** Code Mode as the core's transport: `run_code` over `runtime`, its SDK in the description. */
export function createCodeModeTransport(
  tools: ToolRuntimeCore,
  runtime: CodeRuntime,
  options: CodeModeOptions | undefined,
): ToolTransport {
  const core = tools[coreOf]
  const definition = createRunCodeDefinition(
    {
      execute: (input) => runPipeline(core, input),
      executionMode: (input) => modeOf(core, input),
      logDispatch: (log) => logCodeDispatch(core, log),
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
