import type { ToolDefinition } from '../contract/tool-definition.js'
import type { ToolRuntimeCore, ToolTransport } from '../runtime/index.js'
import type { CodeRuntime } from './code-runtime.js'
import { DEFERRED_INDEX_MAX, RUN_CODE_NAME, SEARCH_BINDING } from './constants.js'
import { logCodeDispatch } from './dispatch-log.js'
import { type CodeModeOptions, createRunCodeDefinition } from './run-code.js'
import { renderToolsSdk, type SdkToolEntry, tsPropertyKey } from './sdk.js'

/** The SDK text derives from a resolved view's map, so it is cached exactly as long as that view lives. */
const sdkCache = new WeakMap<ReadonlyMap<string, ToolDefinition>, string>()

/**
 * The Code Mode SDK of a set of visible tools (`run_code` itself excluded): loaded tools in full;
 * `deferred` ones (a view's set, so it lives exactly as long as `visible`) as a one-line index
 * with `tools.$search`, or only their count past DEFERRED_INDEX_MAX.
 */
export function sdkOf(
  visible: ReadonlyMap<string, ToolDefinition>,
  deferred: ReadonlySet<string> = new Set(),
  searchable = deferred.size > 0,
): string {
  let text = sdkCache.get(visible)
  if (text === undefined) {
    text = renderToolsSdk(sdkEntries(visible, deferred)) + deferredIndex(visible, deferred, searchable)
    sdkCache.set(visible, text)
  }
  return text
}

function sdkEntries(visible: ReadonlyMap<string, ToolDefinition>, deferred: ReadonlySet<string>): SdkToolEntry[] {
  const entries: SdkToolEntry[] = []
  for (const definition of visible.values()) {
    if (definition.name === RUN_CODE_NAME || deferred.has(definition.name)) continue
    entries.push({
      name: definition.name,
      description: definition.description,
      parameters: definition.parameters,
      outputSchema: definition.output.schema,
    })
  }
  return entries
}

/** The checker's SDK text, cached like the model's: same view, same text. */
const checkedSdkCache = new WeakMap<ReadonlyMap<string, ToolDefinition>, string>()

/**
 * What a program is type-checked against: the model's SDK, plus what it may call without a
 * declaration. A deferred tool (named in the SDK's index, found with `$search`) is declared with
 * JSON arguments and result; `$search` as it resolves. Nothing the model cannot call is added.
 */
export function checkedSdkOf(
  visible: ReadonlyMap<string, ToolDefinition>,
  deferred: ReadonlySet<string>,
  searchable: boolean,
): string {
  let text = checkedSdkCache.get(visible)
  if (text === undefined) {
    const loose: string[] = []
    for (const name of [...deferred].sort())
      if (visible.has(name))
        loose.push(`  ${tsPropertyKey(name)}(args?: { [key: string]: JsonValue }): Promise<JsonValue>`)
    if (searchable && deferred.size > 0)
      loose.push(`  ${SEARCH_BINDING}(query: string | { query: string; limit?: number }): Promise<string>`)
    text =
      renderToolsSdk(sdkEntries(visible, deferred), { extraBindings: loose }) +
      deferredIndex(visible, deferred, searchable)
    checkedSdkCache.set(visible, text)
  }
  return text
}

function deferredIndex(
  visible: ReadonlyMap<string, ToolDefinition>,
  deferred: ReadonlySet<string>,
  searchable: boolean,
): string {
  if (deferred.size === 0) return ''
  const lines = [
    `\n/**\n * ${deferred.size} more tool(s) are callable but not declared above.`,
    searchable
      ? ` * Find them with \`await tools.${SEARCH_BINDING}(query)\` (or \`{ query, limit }\`): it resolves to the\n * TypeScript declarations of the best matches; then call them as tools.<name>(args).`
      : ' * Call them by name as tools.<name>(args).',
  ]
  if (deferred.size <= DEFERRED_INDEX_MAX) {
    lines.push(' *')
    for (const name of [...deferred].sort()) {
      const summary = oneLine(visible.get(name)?.description ?? '')
      lines.push(` * - ${name}${summary === '' ? '' : `: ${summary}`}`)
    }
  }
  lines.push(' */\n')
  return lines.join('\n')
}

/** The first sentence of a description on one line, short, and unable to close the comment. */
function oneLine(description: string): string {
  const flat = description.replace(/\s+/g, ' ').trim()
  const sentence = /^(.*?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat
  const short = sentence.length > 100 ? `${sentence.slice(0, 99)}…` : sentence
  return short.replace(/\*\//g, '*\\/')
}

/** Code Mode as the core's transport: `run_code` over `runtime`, its SDK in the description. */
export function createCodeModeTransport(
  tools: ToolRuntimeCore,
  runtime: CodeRuntime,
  options: CodeModeOptions | undefined,
): ToolTransport {
  const definition = createRunCodeDefinition(
    {
      execute: (input, options) => tools.execute(input, options),
      pausing: (exec) => tools.host.pausing(exec.token),
      executionMode: (input) => tools.executionMode(input),
      logDispatch: (log) => logCodeDispatch(tools.host, log),
      finderName: () => tools.host.finderName(),
      checkedSdk: (agent) =>
        checkedSdkOf(
          tools.host.visibleTools(agent),
          tools.host.deferredTools(agent),
          tools.host.finderName() !== undefined,
        ),
    },
    {
      runtime,
      ...(options?.typeCheck === undefined ? {} : { typeCheck: options.typeCheck }),
      ...(options?.maxParallelSubCalls === undefined ? {} : { maxParallelSubCalls: options.maxParallelSubCalls }),
      ...(options?.description === undefined ? {} : { description: options.description }),
    },
  )
  return {
    definition,
    describe: (visible, deferred) =>
      `${definition.description}\n\nSDK available inside the program:\n\n${sdkOf(visible, deferred, tools.host.finderName() !== undefined)}`,
    redirect: (name) =>
      `this agent presents its tools through Code Mode; call tools.${name}(args) from inside a ${RUN_CODE_NAME} program`,
  }
}
