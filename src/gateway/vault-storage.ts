// Where the per-caller credential vault keeps its sealed entries: the file next to the config, or
// the PostgreSQL store (`--store`), which every instance on that database reads. Both seal and
// open entries the same way (see vault.ts); the store only ever holds them sealed.
import type { VaultRows } from '../store/vault-rows.js'
import type { ViewerCredentials } from '../viewer/credentials.js'
import { CredentialVault, openVaultEntry, sealVaultEntry, type VaultEntryInfo } from './vault.js'

/** The vault, wherever its entries are kept. */
export interface VaultStorage {
  /** The secret of `subject` for `server`, or undefined when none is stored; throws when the entry fails its tag. */
  get(server: string, subject: string): Promise<string | undefined>
  set(server: string, subject: string, secret: string): Promise<void>
  /** Remove an entry; whether there was one. */
  delete(server: string, subject: string): Promise<boolean>
  /** Names and dates only, never a secret. */
  list(): Promise<VaultEntryInfo[]>
  close(): Promise<void>
}

/** The vault in its file next to the config. */
export function fileVaultStorage(file: string, key: Buffer): VaultStorage {
  const vault = new CredentialVault(file, key)
  return {
    get: async (server, subject) => vault.get(server, subject),
    set: async (server, subject, secret) => vault.set(server, subject, secret),
    delete: async (server, subject) => vault.delete(server, subject),
    list: async () => vault.list(),
    close: async () => {},
  }
}

/**
 * The vault in the PostgreSQL store at `url`, opened on first use (a failed open is tried again on
 * the next). `migrate` false refuses a store whose schema is older than this toolgate's.
 */
export function storeVaultStorage(url: string, key: Buffer, migrate = true): VaultStorage {
  let opening: Promise<VaultRows> | undefined
  const rows = (): Promise<VaultRows> => {
    opening ??= import('../store/vault-rows.js').then(({ openVaultRows }) => openVaultRows(url, migrate))
    opening.catch(() => {
      opening = undefined
    })
    return opening
  }
  return {
    async get(server, subject) {
      const row = await (await rows()).get(server, subject)
      return row === undefined ? undefined : openVaultEntry(key, row, 'the row in the store')
    },
    async set(server, subject, secret) {
      await (await rows()).put(sealVaultEntry(key, server, subject, secret))
    },
    delete: async (server, subject) => (await rows()).delete(server, subject),
    list: async () => (await rows()).list(),
    async close() {
      const open = opening
      opening = undefined
      await open?.then(
        (r) => r.close(),
        () => {},
      )
    },
  }
}

/** The viewer's self-service page over `storage`, for `servers` (those with `auth.perUser`). */
export function viewerCredentials(storage: VaultStorage, servers: readonly string[]): ViewerCredentials {
  return {
    servers,
    async stored(subject) {
      const own = (await storage.list()).filter((e) => e.subject === subject && servers.includes(e.server))
      return new Map(own.map((e) => [e.server, e.updatedAt]))
    },
    set: (server, subject, secret) => storage.set(server, subject, secret),
    delete: (server, subject) => storage.delete(server, subject),
  }
}
