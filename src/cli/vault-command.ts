// `toolgate vault set|list|delete`: each person's own secret for an upstream whose config entry
// says "auth": { "perUser": ... }, kept encrypted in the vault file next to the config, or in the
// PostgreSQL store (`--store`, or the config's "store") that the gateway's instances share.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import {
  fileVaultStorage,
  loadConfig,
  readVaultKey,
  storeFlag,
  storeVaultStorage,
  type VaultStorage,
  vaultSettings,
} from '../gateway/index.js'
import { type CliCommand, UsageError } from './command.js'

const usage = `Usage: toolgate vault set --server NAME --subject S [--value-file FILE] [--config FILE] [--vault-key-file FILE] [--store URL]
       toolgate vault list [--config FILE] [--vault-key-file FILE] [--store URL]
       toolgate vault delete --server NAME --subject S [--config FILE] [--vault-key-file FILE] [--store URL]

set     stores the secret of subject S for server NAME (read from --value-file, else from standard
        input; a trailing newline is dropped), replacing the one stored before
list    prints each entry's server, subject and date (never a secret)
delete  removes an entry

The vault is toolgate.vault.json next to --config (or in the current folder), encrypted with
AES-256-GCM under the key in --vault-key-file (default: $TOOLGATE_VAULT_KEY_FILE): 32 bytes, raw,
as 64 hex digits or in base64. NAME must be a server of the config with "auth": { "perUser": ... }
when --config is given.

With --store URL (postgres://…), or a config whose "store" is set, the entries are kept in that
PostgreSQL store instead, sealed the same way: every gateway instance serving with that store
reads them (due store migrations are applied first).
`

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const vault: CliCommand = {
  summary: "Set, list or delete each person's own upstream secrets (servers with auth.perUser)",
  usage,
  async run(argv, io) {
    const options = {
      server: { type: 'string' },
      subject: { type: 'string' },
      'value-file': { type: 'string' },
      config: { type: 'string' },
      'vault-key-file': { type: 'string' },
      store: { type: 'string' },
    } as const
    let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>
    try {
      parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options })
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error))
    }
    const [action, ...rest] = parsed.positionals
    if (action !== 'set' && action !== 'list' && action !== 'delete')
      throw new UsageError('expected "set", "list" or "delete"')
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`)
    const values = parsed.values
    const { vaultKeyFile, vaultFile } = vaultSettings(values, process.env)
    if (vaultKeyFile === undefined) throw new UsageError('expected --vault-key-file FILE (or $TOOLGATE_VAULT_KEY_FILE)')
    const config = values.config === undefined ? undefined : await loadConfig(values.config)
    let storeUrl = config?.store?.url
    if (values.store !== undefined) {
      const flag = storeFlag(values.store)
      if (typeof flag === 'string') throw new UsageError(flag)
      storeUrl = flag.url
    }
    const key = readVaultKey(vaultKeyFile)
    const store = storeUrl === undefined ? fileVaultStorage(vaultFile, key) : storeVaultStorage(storeUrl, key)
    try {
      return await runAction(action, values, config, store, io)
    } finally {
      await store.close()
    }
  },
}

async function runAction(
  action: 'set' | 'list' | 'delete',
  values: { server?: string; subject?: string; 'value-file'?: string; config?: string },
  config: Awaited<ReturnType<typeof loadConfig>> | undefined,
  store: VaultStorage,
  io: Parameters<CliCommand['run']>[1],
): Promise<number> {
  if (action === 'list') {
    for (const entry of await store.list())
      io.stdout.write(`${entry.server}\t${JSON.stringify(entry.subject)}\t${entry.updatedAt}\n`)
    return 0
  }
  const { server, subject } = values
  if (server === undefined || server === '') throw new UsageError('expected --server NAME')
  if (subject === undefined || subject === '') throw new UsageError('expected --subject S')
  if (config !== undefined) {
    const entry = config.servers?.[server]
    if (entry === undefined || !('url' in entry) || entry.auth === undefined || !('perUser' in entry.auth))
      throw new UsageError(`${values.config}: servers.${server} is not a server with "auth": { "perUser": ... }`)
  }
  if (action === 'delete') {
    const removed = await store.delete(server, subject)
    io.stdout.write(removed ? `deleted ${server} ${JSON.stringify(subject)}\n` : 'no such entry\n')
    return removed ? 0 : 1
  }
  const file = values['value-file']
  const text = file === undefined ? await readStdin() : readFileSync(file, 'utf8')
  const secret = text.replace(/\r?\n$/, '')
  if (secret === '') throw new UsageError('the secret is empty')
  await store.set(server, subject, secret)
  io.stdout.write(`stored ${server} ${JSON.stringify(subject)}\n`)
  return 0
}

export default vault
