import type { Context } from 'cordis'
import { ConfigError } from '../errors/config-error.js'
import type { ToolRuntimeCore } from '../runtime/index.js'
import type { CodeModeOptions } from './run-code.js'
import { selectCodeRuntime } from './select-runtime.js'
import { createCodeModeTransport } from './transport.js'

/**
 * Install Code Mode into the transport slot of `tools` for the lifetime of `ctx`: `run_code`
 * joins every `code`/`both` view, its name is reserved, and disposing `ctx` uninstalls it and
 * disposes the runtime it created (the worker pool's threads and timers).
 */
export function installCodeMode(ctx: Context, tools: ToolRuntimeCore, options?: CodeModeOptions): void {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new ConfigError('codeMode', 'expected an options object')
  const { runtime, owned } = selectCodeRuntime(options, 'codeMode')
  let uninstall: () => void
  try {
    uninstall = tools.host.installTransport(createCodeModeTransport(tools, runtime, options))
  } catch (error) {
    if (owned) void runtime.dispose?.()
    throw error
  }
  ctx.effect(
    () => async () => {
      uninstall()
      if (owned) await runtime.dispose?.()
    },
    'code-mode',
  )
}

/**
 * Code Mode as a Cordis plugin, for a `ToolRuntimeCore` (the `ToolRuntime` preset installs it
 * itself): `ctx.plugin(CodeMode, options)`.
 */
export const CodeMode = {
  name: 'toolgate-code-mode',
  inject: ['tools'],
  apply(ctx: Context, options?: CodeModeOptions): void {
    installCodeMode(ctx, ctx.tools, options)
  },
}
