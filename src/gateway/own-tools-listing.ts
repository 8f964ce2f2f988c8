// The gateway's own file tools as `serve` lists them to a 2025 client, made by the build into a
// JSON file that `serve`'s first listing reads (raw-first-own.ts): the tools' JSON Schemas come
// from the runtime's projection of their definitions, which the first script does not load.
// Listed the way the gateway lists them: registered in a fresh runtime in native mode, projected
// by `listTools`. Only the grep tool's texts depend on anything (whether ripgrep is there), so
// both variants are kept; the root appears nowhere in the listing.
import type { Tool } from '../mcp/gateway.js'
import { listTools } from '../mcp/gateway.js'
import { createToolRuntime } from '../preset/index.js'
import { ownToolDefinitions } from './own-tools.js'

/** The file name beside the first listing's module (dist/gateway/) the build writes. */
export const OWN_TOOLS_FILE = 'own-tools-listed.json'

/** What the build writes: the file tools listed with ripgrep and with the JavaScript search. */
export interface OwnToolsListed {
  readonly ripgrep: Tool[]
  readonly javascript: Tool[]
}

/** The gateway's own file tools (no bash) as a 2025 client is shown them, for either grep. */
export async function listOwnFileTools(): Promise<OwnToolsListed> {
  // The root is only realpath'd at a call's first use; no definition mentions it.
  const root = '/'
  return {
    ripgrep: await listed(root, 'rg'),
    javascript: await listed(root, false),
  }
}

async function listed(root: string, ripgrep: string | false): Promise<Tool[]> {
  const runtime = await createToolRuntime({ mode: 'native' })
  try {
    for (const definition of ownToolDefinitions({ files: true, bash: false, root, ripgrep }))
      runtime.tools.register(definition)
    return listTools(runtime.tools, undefined, 'legacy')
  } finally {
    await runtime.dispose()
  }
}
