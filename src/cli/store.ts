// `toolgate store migrate|status`: bring a PostgreSQL store's schema up to date, or report on it.
import { parseArgs } from 'node:util'
import { loadConfig, openConfiguredStore, type StoreConfig, storeFlag } from '../gateway/index.js'
import { type CliCommand, UsageError } from './command.js'

const usage = `Usage: toolgate store migrate (--store URL | --config FILE)
       toolgate store status (--store URL | --config FILE)

migrate  applies the schema migrations this toolgate knows, under an advisory lock (instances that
         start together apply each one once), and prints the versions before and after. A schema
         newer than this toolgate knows is refused and left as it is.
status   prints the schema version (and whether migrations are due), the journal's size, open
         turns and claims; exit 1 when the schema needs migrating or is newer than this toolgate.

  --store URL     the PostgreSQL store (postgres://user:password@host:port/database)
  --config FILE   a gateway config whose "store" names it
`

async function storeConfig(values: { store?: string; config?: string }): Promise<StoreConfig> {
  if (values.store !== undefined) {
    const config = storeFlag(values.store)
    if (typeof config === 'string') throw new UsageError(config)
    return config
  }
  if (values.config !== undefined) {
    const file = await loadConfig(values.config)
    if (file.store === undefined) throw new UsageError(`${values.config}: no "store" in the config`)
    return file.store
  }
  throw new UsageError('expected --store URL or --config FILE')
}

const store: CliCommand = {
  summary: 'Migrate or inspect the PostgreSQL store (schema version, journal size)',
  usage,
  async run(argv, io) {
    let parsed: ReturnType<
      typeof parseArgs<{ options: { store: { type: 'string' }; config: { type: 'string' } }; allowPositionals: true }>
    >
    try {
      parsed = parseArgs({
        args: [...argv],
        allowPositionals: true,
        strict: true,
        options: { store: { type: 'string' }, config: { type: 'string' } },
      })
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error))
    }
    const [action, ...rest] = parsed.positionals
    if (action !== 'migrate' && action !== 'status') throw new UsageError('expected "migrate" or "status"')
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`)
    const config = await storeConfig(parsed.values)
    if (action === 'migrate') {
      const { migrateStore } = await import('../store/postgres.js')
      const { from, to } = await migrateStore(config.url)
      io.stdout.write(from === to ? `schema version ${to}: up to date\n` : `schema version ${from} → ${to}\n`)
      return 0
    }
    const { storeSchemaStatus } = await import('../store/postgres.js')
    const schema = await storeSchemaStatus(config.url)
    io.stdout.write(`schema version ${schema.version} (this toolgate: ${schema.codeVersion})\n`)
    if (schema.version > schema.codeVersion) {
      io.stdout.write('the store is newer than this toolgate: upgrade toolgate\n')
      return 1
    }
    if (schema.version < schema.codeVersion) {
      io.stdout.write('migrations are due: run "toolgate store migrate"\n')
      return 1
    }
    const opened = await openConfiguredStore(config, false)
    try {
      const status = await opened.status()
      io.stdout.write(
        `${status.where}\njournal records: ${status.journalRecords}\nopen turns: ${status.openTurns}\nclaims: ${status.claims}\n` +
          `calls started without a result: ${status.unfinishedCalls} (interrupted, never re-run, or still running)\n`,
      )
    } finally {
      await opened.close()
    }
    return 0
  },
}

export default store
