// The gateway's one door: what src/cli reads to parse a command's settings and start serving.
// What every command may need loads with this module; the rest of the gateway loads on first use
// (`loadGateway`, and serveGateway's own imports), so that a command (or a `serve` without --http,
// a store or metrics) compiles and runs only what it uses. Names are listed, not `export *`, so that the
// bundles keep only what the CLI reads (serve's early script above all).
export { loadConfig } from './config.js'
export { keepConfigTexts } from './config-read.js'
export { openConfiguredStore, type StoreConfig, storeFlag } from './config-store.js'
export type { Gateway, GatewayStartup, UpstreamReport } from './gateway.js'
export type { Authenticator } from './http-auth.js'
export type { GuardedSession } from './http-guard.js'
export type { SharedBuckets } from './http-limits.js'
export { createLog, type Log, type TextSink } from './log.js'
export { configPathOf, reloadOnHangup } from './reload.js'
export { spawnBeforeLoad } from './serve-early.js'
export { type ServeGatewayOptions, serveGateway } from './serve-gateway.js'
export type { HttpReload } from './serve-http.js'
export type { ServeOps } from './serve-ops.js'
export { SERVE_FLAGS, spawnUpstreamsEarly } from './serve-spawn.js'
export type { SessionRegistry } from './serve-store.js'
export { type GatewaySettings, readSettings, vaultSettings } from './settings.js'
export type { StartupGate } from './startup-gate.js'
export { CredentialVault, readVaultKey } from './vault.js'
export { fileVaultStorage, storeVaultStorage, type VaultStorage, viewerCredentials } from './vault-storage.js'

export const loadGateway = () => import('./gateway.js')
