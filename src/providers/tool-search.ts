// Which tool search a request carries: the provider's own, where it has one and it is asked for, or
// toolgate's finder sent as an ordinary tool. The choice is reported in the downgrade list.
import type { Agent } from '../contract/execution.js'
import type { ToolDefinition, ToolSchema } from '../contract/tool-definition.js'
import { ConfigError } from '../errors/config-error.js'
import type { FormatModule } from './format-module.js'
import type { ProviderFormat, ProviderTools, ProviderToolsOptions, ToolSearchMode } from './types.js'

/** toolgate's finder, as the search feature names it. */
export const DEFAULT_FINDER = 'search_tools'

/** The part of `ctx.tools` that tells which tools a scope has deferred. */
export interface DeferredToolsSource {
  deferred(scope?: Agent): string[]
  get(name: string, scope?: Agent): ToolDefinition | undefined
}

/**
 * The schemas of the tools `agent` may call but that are deferred (not listed by `schemas()`), for a
 * native tool search: `toProviderTools(format, schemas, { toolSearch: 'native', deferred })`.
 */
export function deferredSchemas(tools: DeferredToolsSource, agent?: Agent): ToolSchema[] {
  if (typeof tools?.deferred !== 'function' || typeof tools.get !== 'function')
    throw new ConfigError('deferredSchemas(tools)', 'expected ctx.tools (a ToolRuntime)')
  const out: ToolSchema[] = []
  for (const name of tools.deferred(agent)) {
    const definition = tools.get(name, agent)
    if (definition !== undefined)
      out.push({ name: definition.name, description: definition.description, parameters: definition.parameters })
  }
  return out
}

export function checkToolSearch(mode: unknown, where: string): ToolSearchMode {
  if (mode === undefined) return 'toolgate'
  if (mode !== 'native' && mode !== 'toolgate') throw new ConfigError(where, `expected 'native' or 'toolgate'`)
  return mode
}

/**
 * The request's tools for `format` with the tool search asked for. A native search replaces the
 * finder only when the provider has one and something is deferred; otherwise the tools go out as
 * listed (the finder among them) and the report says why.
 */
export function projectTools<F extends ProviderFormat>(
  format: F,
  module: FormatModule<F>,
  schemas: readonly ToolSchema[],
  options: ProviderToolsOptions,
  where: string,
): ProviderTools<F> {
  const strict = options.strict === true
  const mode = checkToolSearch(options.toolSearch, `${where}.toolSearch`)
  const finder = options.finder ?? DEFAULT_FINDER
  if (typeof finder !== 'string' || finder === '') throw new ConfigError(`${where}.finder`, 'expected a tool name')
  const deferred = options.deferred ?? []
  if (!Array.isArray(deferred)) throw new ConfigError(`${where}.deferred`, 'expected an array of tool schemas')
  const hasFinder = schemas.some((schema) => schema.name === finder)
  if (mode === 'native' && module.nativeSearch !== undefined && deferred.length > 0) {
    const listed = new Set(schemas.map((schema) => schema.name))
    const onDemand = deferred.filter((schema) => !listed.has(schema.name))
    const projected = module.nativeSearch(
      schemas.filter((schema) => schema.name !== finder),
      onDemand,
      strict,
    )
    return {
      tools: projected.tools,
      downgrades: [
        ...projected.downgrades,
        `tool search: native (${format}), ${onDemand.length} deferred tool(s) sent to load on demand` +
          (hasFinder ? ` instead of ${finder}` : ''),
      ],
      toolSearch: 'native',
    }
  }
  const projected = module.toTools(schemas, strict)
  if (!hasFinder && mode === 'toolgate') return projected
  const why =
    mode === 'toolgate'
      ? ''
      : module.nativeSearch === undefined
        ? ` (${format} has no native tool search)`
        : ' (native asked for, but no deferred tools were given)'
  const line = hasFinder ? `tool search: toolgate's ${finder}${why}` : `tool search: none${why}`
  return {
    tools: projected.tools,
    downgrades: [...projected.downgrades, line],
    ...(hasFinder ? { toolSearch: 'toolgate' as const } : {}),
  }
}
