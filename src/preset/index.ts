// The preset: the runtime core with the features a newcomer expects already installed (Code Mode in
// the transport slot, the timeout policy, an approval service). The core never imports this folder.
export { type CreateToolRuntimeOptions, createToolRuntime, type ToolRuntimeHandle } from './create.js'
export { ToolRuntime, type ToolRuntimeConfig } from './tool-runtime.js'
