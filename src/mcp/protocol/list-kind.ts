// The lists a server's list_changed notifications name, which the client link re-lists and a served
// catalog announces again.

/** The lists that `notifications/*\/list_changed` can change. */
export type McpListKind = 'resources' | 'prompts'
