// The gateway's own tools in `serve`'s first listing (raw-first.ts), listed before the CLI's bundle
// loads. Their JSON Schemas come from the runtime's projection, which the first script does not
// load: the build lists them with the gateway's own code (own-tools-listing.ts) into a JSON file
// beside this module, read here. Whatever that file cannot answer for leaves the listing to the
// gateway, which then says itself what it serves (or why it cannot start).
import { readFileSync, statSync } from 'node:fs'
import { type JsonValue, jsonDepthExceeds } from '../json/index.js'
import type { Tool } from '../mcp/gateway.js'
// Not the tools' door: it would bring every tool's schemas into the first script.
import { bundledRipgrep } from '../tools/ripgrep.js'
import { isRecord } from '../util/is-record.js'
import type { GatewaySettings } from './settings.js'

/** own-tools-listing.ts' OWN_TOOLS_FILE (not imported: that module loads the runtime). */
const OWN_TOOLS_FILE = 'own-tools-listed.json'

/** The own tools the gateway will list first, or why the first listing cannot list them. */
export function ownToolsBeforeLoad(
  settings: Pick<GatewaySettings, 'files' | 'bash' | 'root'>,
): { tools: Tool[] } | { reason: string } {
  if (settings.bash) return { reason: 'bash is served' }
  if (settings.files === false) return { tools: [] }
  // The gateway refuses a root that is not a directory; that refusal is its to report.
  let listed: unknown
  try {
    if (!statSync(settings.root).isDirectory()) return { reason: `the root ${settings.root} is not a directory` }
  } catch {
    return { reason: `the root ${settings.root} is not a directory` }
  }
  try {
    listed = JSON.parse(readFileSync(new URL(OWN_TOOLS_FILE, import.meta.url), 'utf8'))
  } catch {
    return { reason: `no ${OWN_TOOLS_FILE} from the build` }
  }
  // The grep tool's texts say which search runs, as the gateway's own definition does.
  const variant = isRecord(listed) ? listed[bundledRipgrep() === undefined ? 'javascript' : 'ripgrep'] : undefined
  if (!Array.isArray(variant)) return { reason: `${OWN_TOOLS_FILE} does not list the file tools` }
  return { tools: variant as Tool[] }
}

/**
 * The registration's limit on a schema's nesting (runtime/definition-check.ts' MAX_SCHEMA_DEPTH,
 * not imported: that module loads the schema validators; a test keeps the two equal).
 */
export const FIRST_LISTING_MAX_DEPTH = 256

/**
 * The first listing: the own tools, then the upstream's, as the gateway registers them; undefined
 * when the gateway would not serve an upstream tool as listed: one that takes an own tool's name,
 * or nests deeper than registration allows (counted over the whole tool, one level above its
 * schemas, so never short of what registration refuses). The gateway then lists, and says why.
 */
export function withOwnTools(own: readonly Tool[], upstream: readonly Tool[]): Tool[] | undefined {
  const names = new Set(own.map((tool) => tool.name))
  for (const tool of upstream)
    if (names.has(tool.name) || jsonDepthExceeds(tool as unknown as JsonValue, FIRST_LISTING_MAX_DEPTH))
      return undefined
  return [...own, ...upstream]
}
