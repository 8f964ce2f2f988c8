// `toolgate serve` starts its stdio upstream servers before it loads the runtime and the MCP SDK,
// so that their start-up runs while the gateway loads its own modules instead of after.

import { discardEarlySpawns, type StdioSpawnSpec, spawnEarlyMissing } from '../mcp/gateway.js'
import type { GatewaySettings } from './settings.js'

/** The flags `serve` reads (its run and the executable's first script read them alike). */
export const SERVE_FLAGS: readonly string[] = [
  'root',
  'bash',
  'mode',
  'config',
  'http',
  'verbose',
  'allow-host',
  'allow-origin',
  'max-message-bytes',
  'check',
  'host',
  'trust-proxy',
  'store',
  'metrics-port',

  'drain-timeout',
  'vault-key-file',
  'log-format',
  'log-level',
]

/**
 * Spawn every stdio server of the config now, sandboxed ones excepted (and none the executable's
 * first script already spawned); each connection takes its process over. Returns how to stop the
 * processes no connection took (call it once the gateway has opened, or failed to).
 */
export function spawnUpstreamsEarly(settings: Pick<GatewaySettings, 'servers'>): () => void {
  // Windows keeps the MCP SDK's own transport (see createTransport), which spawns for itself.
  if (process.platform === 'win32') return () => {}
  const specs: StdioSpawnSpec[] = []
  // A sandboxed server runs only inside its sandbox, which its connection builds: spawning its
  // command here would run it outside, if only until the unclaimed process is stopped.
  for (const spec of Object.values(settings.servers))
    if ('command' in spec && spec.sandbox === undefined) specs.push(spec)
  spawnEarlyMissing(specs)
  return discardEarlySpawns
}
