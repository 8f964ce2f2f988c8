// `toolgate serve` starts its stdio upstream servers before it loads the runtime and the MCP SDK,
// so that their start-up runs while the gateway loads its own modules instead of after.
import { discardEarlySpawns, spawnEarly } from '../mcp/stdio-spawn.js'
import type { GatewaySettings } from './settings.js'

/**
 * Spawn every stdio server of the config now; each connection takes its process over. Returns how
 * to stop the processes no connection took (call it once the gateway has opened, or failed to).
 */
export function spawnUpstreamsEarly(settings: Pick<GatewaySettings, 'servers'>): () => void {
  // Windows keeps the MCP SDK's own transport (see createTransport), which spawns for itself.
  if (process.platform === 'win32') return () => {}
  for (const spec of Object.values(settings.servers)) if ('command' in spec) spawnEarly(spec)
  return discardEarlySpawns
}
