// The gateway's own tools (the file tools and bash, rooted in the workspace), with what MCP
// clients are told about each. The gateway registers these; the build lists them for the first
// listing of `serve` (own-tools-listing.ts), so both come from here.
import type { ToolAnnotations, ToolDefinition } from '../contract/tool-definition.js'
import { createBashTool, createFsTools } from '../tools/index.js'

/** What MCP clients are told about toolgate's own tools. */
const ANNOTATIONS: Readonly<Record<string, ToolAnnotations>> = {
  read_file: { readOnlyHint: true },
  glob: { readOnlyHint: true },
  grep: { readOnlyHint: true },
  list_dir: { readOnlyHint: true },
  write_file: { destructiveHint: true, idempotentHint: true },
  edit_file: { destructiveHint: true },
  bash: { destructiveHint: true, openWorldHint: true },
}

/** What the own tools depend on: which are served, and where. */
export interface OwnToolsOptions {
  readonly files: boolean
  readonly bash: boolean
  readonly root: string
  /** The file tools' ripgrep (see `FsToolsOptions.ripgrep`): default the bundled one. */
  readonly ripgrep?: string | false
}

/** The own tools in the order they are registered (and so listed), each with its annotations. */
export function ownToolDefinitions(options: OwnToolsOptions): ToolDefinition[] {
  const own: ToolDefinition[] = options.files
    ? createFsTools({ root: options.root, ...(options.ripgrep === undefined ? {} : { ripgrep: options.ripgrep }) })
    : []
  if (options.bash) own.push(createBashTool({ cwd: options.root }))
  return own.map((definition) => {
    const annotations = ANNOTATIONS[definition.name]
    return annotations ? { ...definition, meta: { ...definition.meta, annotations } } : definition
  })
}
