// The subcommand table. A command is one module default-exporting a CliCommand, loaded only when run.
import type { CliCommand } from './command.js'

export interface CommandEntry {
  readonly summary: string
  readonly load: () => Promise<{ default: CliCommand }>
}

export const commands: Readonly<Record<string, CommandEntry>> = {
  policy: {
    summary: "Explain the config policy's decision for a call, or test a table of expected decisions",
    load: () => import('./policy-command.js'),
  },
  serve: { summary: 'Serve tools (and aggregated MCP servers) as an MCP server', load: () => import('./serve.js') },
  store: {
    summary: 'Migrate or inspect the PostgreSQL store (schema version, journal size)',
    load: () => import('./store.js'),
  },
  tools: { summary: 'Print what the model would see under a configuration', load: () => import('./tools.js') },
  vault: {
    summary: "Set, list or delete each person's own upstream secrets (servers with auth.perUser)",
    load: () => import('./vault-command.js'),
  },
  view: {
    summary: 'Show a session journal as cards in a web page (live), or write it as one HTML file',
    load: () => import('./view.js'),
  },
}
