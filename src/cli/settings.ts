// Command-line flags merged over the config file: flags win, the file fills in the rest.
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { ToolPresentationMode } from '../contract/execution.js'
import { UsageError } from './command.js'
import { type GatewayConfig, loadConfig, type PolicyConfig, type ServerConfig } from './config.js'

export interface GatewaySettings {
  /** Absolute workspace root of the file tools (and bash's working directory). */
  readonly root: string
  readonly bash: boolean
  readonly mode: ToolPresentationMode
  readonly servers: Readonly<Record<string, ServerConfig>>
  readonly policy: PolicyConfig
  readonly verbose: boolean
  /** Port of the Streamable HTTP endpoint (`serve --http`); stdio when absent. */
  readonly http?: number
}

const MODES: readonly string[] = ['native', 'code', 'both']

/** Parse `argv` (flags only) for a command that accepts `flags`, then merge the config file. */
export async function readSettings(argv: readonly string[], flags: readonly string[]): Promise<GatewaySettings> {
  const all = {
    root: { type: 'string' },
    bash: { type: 'boolean' },
    mode: { type: 'string' },
    config: { type: 'string' },
    http: { type: 'string' },
    verbose: { type: 'boolean' },
  } as const
  const options = Object.fromEntries(Object.entries(all).filter(([name]) => flags.includes(name)))
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const mode = values.mode as string | undefined
  if (mode !== undefined && !MODES.includes(mode))
    throw new UsageError(`--mode: expected native, code or both, got "${mode}"`)
  let http: number | undefined
  if (values.http !== undefined) {
    const port = Number(values.http)
    if (!/^\d+$/.test(String(values.http)) || port > 65535)
      throw new UsageError(`--http: expected a port number (0-65535), got "${values.http}"`)
    http = port
  }
  const file: GatewayConfig = values.config === undefined ? {} : await loadConfig(values.config as string)
  const root = values.root !== undefined ? path.resolve(values.root as string) : (file.root ?? process.cwd())
  return {
    root,
    bash: (values.bash as boolean | undefined) ?? file.bash ?? false,
    mode: (mode as ToolPresentationMode | undefined) ?? file.mode ?? 'native',
    servers: file.servers ?? {},
    policy: file.policy ?? {},
    verbose: values.verbose === true,
    http,
  }
}
