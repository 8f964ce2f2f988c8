// `toolgate view JOURNAL [--port N] [--out FILE.html]`: the session viewer.
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError } from '../errors/config-error.js'
import { stateKeyBytes } from '../providers/state-seal.js'
import type { ViewerAccess } from '../viewer/access.js'
import type { ViewerApprovalHandler } from '../viewer/approval-state.js'
import { type CliCommand, UsageError } from './command.js'

const usage = `Usage: toolgate view JOURNAL [--port N] [--host ADDR --access FILE] [--approve --state FILE [--state-key-file KEY]]
                     [--out FILE.html] [--config FILE --vault-key-file KEY]
       toolgate view --store URL [--port N] [--host ADDR --access FILE] [--approve] [--config FILE --vault-key-file KEY]

Serves the session recorded in JOURNAL on http://127.0.0.1 and follows the file as it grows.

Flags:
  --port N         port (default: any free port)
  --host ADDR      address to listen on (default 127.0.0.1); anything but loopback needs --access
                   with tokens: every page then asks for a token first
  --access FILE    JSON { "tokens": [{ "sha256": "<hex of the token>", "subject": "alice",
                   "groups": ["dev"] }], "approvers": { "subjects"?: [...], "groups"?: [...] } }:
                   who may sign in (the gateway's token shape) and who of them may decide
                   approvals (with tokens and --approve, approvers are required)
  --approve        offer approve / deny buttons (once, or always for that agent and tool) on calls
                   waiting for approval; needs --state (or --store)
  --state FILE     the suspended turn's state (the JSON 'state' of an 'approval-required' result);
                   a decision is recorded there, once per call, and applied by resumeModelLoop
  --state-key-file KEY
                   the key the program seals its states with (the file's exact bytes, as passed to
                   runModelLoop's stateKey; default: $TOOLGATE_STATE_KEY_FILE): only a state whose
                   seal verifies is touched, and it is sealed again with the decision in it.
                   Without a key, a sealed state is refused
  --out FILE.html  write the view as one self-contained HTML file instead of serving it
  --store URL      show the journal kept in the PostgreSQL store (postgres://…) instead of a file,
                   live; with --approve, decisions are recorded in the store, once per call, for
                   every instance that shares it (no --state); an "always" also writes the
                   standing rule to the store
  --config FILE    the gateway's config: each person signed in with an --access token may set or
                   delete their own secret for its servers with "auth": { "perUser": ... } at
                   /credentials (never another's; the value is never shown), kept in the vault
                   file next to FILE or, with --store, in the store; needs the vault key
  --vault-key-file KEY
                   the vault's 32-byte key (default: $TOOLGATE_VAULT_KEY_FILE), as serve takes it
`

function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN
  if (!(port <= 65_535)) throw new UsageError(`--port: expected an integer from 0 to 65535, got "${text}"`)
  return port
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        access: { type: 'string' },
        out: { type: 'string' },
        approve: { type: 'boolean' },
        state: { type: 'string' },
        'state-key-file': { type: 'string' },
        store: { type: 'string' },
        config: { type: 'string' },
        'vault-key-file': { type: 'string' },
      },
    })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
}

function describe(error: unknown, journal: string): Error {
  const code = (error as { code?: unknown } | undefined)?.code
  if (code === 'ENOENT') return new ConfigError('journal', `not found: ${journal}`)
  if (code === 'EADDRINUSE') return new ConfigError('--port', 'already in use on 127.0.0.1')
  return error instanceof Error ? error : new Error(String(error))
}

function keyFileFromEnv(): string | undefined {
  const path = process.env.TOOLGATE_STATE_KEY_FILE
  return path === undefined || path === '' ? undefined : path
}

/** The key file's exact bytes (the program passes the same bytes as `stateKey`). */
async function readStateKey(path: string): Promise<Uint8Array> {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code
    throw new ConfigError('--state-key-file', code === 'ENOENT' ? `not found: ${path}` : `${path}: ${String(error)}`)
  }
  try {
    return stateKeyBytes(bytes, `state key file ${path}`)
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
}

/** The `--access` file, checked (every problem with its path). */
async function readAccess(path: string): Promise<ViewerAccess> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new ConfigError('--access', `cannot read ${path}: ${(error as Error).message}`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(path, `not JSON: ${(error as Error).message}`)
  }
  const { checkViewerAccess } = await import('../viewer/access.js')
  return checkViewerAccess(value, path)
}

/**
 * The exposure rules startViewer enforces, checked first in the CLI's own words: its errors would
 * name `startViewer(options)…`, an API path a command-line user never wrote.
 */
async function checkExposure(host: string | undefined, access: ViewerAccess | undefined, approve: boolean) {
  const tokens = (access?.tokens ?? []).length > 0
  if (host !== undefined) {
    const { isLoopbackHost } = await import('../viewer/access.js')
    if (!isLoopbackHost(host) && !tokens)
      throw new ConfigError(
        '--host',
        `listening on ${host} (not a loopback address) needs token login: give --access FILE with at least one token`,
      )
  }
  if (approve && tokens && access?.approvers === undefined)
    throw new ConfigError('--access', 'with token login, --approve needs "approvers" (subjects or groups) in the file')
}

/** Resolves when the process is asked to stop (Ctrl-C or SIGTERM). */
function stopRequested(): Promise<void> {
  return new Promise((done) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      done()
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}

/** With --config, the self-service credentials page over the vault (the store's with `storeUrl`). */
async function credentialsOf(values: ReturnType<typeof parse>['values'], storeUrl: string | undefined) {
  if (values.config === undefined) {
    if (values['vault-key-file'] !== undefined) throw new UsageError('--vault-key-file is only used with --config')
    return undefined
  }
  if (values.out !== undefined) throw new UsageError('--out writes a static file; it takes no --config')
  const gateway = await import('../gateway/index.js')
  const { vaultKeyFile, vaultFile } = gateway.vaultSettings(values, process.env)
  if (vaultKeyFile === undefined)
    throw new UsageError('--config needs the vault key: --vault-key-file FILE (or $TOOLGATE_VAULT_KEY_FILE)')
  const config = await gateway.loadConfig(values.config)
  const servers = Object.entries(config.servers ?? {})
    .filter(([, entry]) => 'url' in entry && entry.auth !== undefined && 'perUser' in entry.auth)
    .map(([name]) => name)
  const key = gateway.readVaultKey(vaultKeyFile)
  const url = storeUrl ?? config.store?.url
  const storage = url === undefined ? gateway.fileVaultStorage(vaultFile, key) : gateway.storeVaultStorage(url, key)
  return { credentials: gateway.viewerCredentials(storage, servers), close: () => storage.close() }
}

const view: CliCommand = {
  summary: 'Show a session journal as cards in a web page (live), or write it as one HTML file',
  usage,
  async run(argv, io) {
    const { values, positionals } = parse(argv)
    if (values.store !== undefined) return viewStore(values, positionals, io)
    if (positionals.length !== 1) throw new UsageError('expected exactly one JOURNAL file')
    const journal = resolve(positionals[0])
    if (values.out !== undefined && values.port !== undefined) {
      throw new UsageError('--out writes a file; it takes no --port')
    }
    if (values.approve === true && values.state === undefined) {
      throw new UsageError("--approve needs --state FILE (the suspended turn's state to record decisions in)")
    }
    if (values.state !== undefined && values.approve !== true) {
      throw new UsageError('--state is only used with --approve')
    }
    const keyFile = values['state-key-file'] ?? (values.state !== undefined ? keyFileFromEnv() : undefined)
    if (keyFile !== undefined && values.state === undefined) {
      throw new UsageError('--state-key-file is only used with --approve --state FILE')
    }
    if (values.out !== undefined && (values.host !== undefined || values.access !== undefined)) {
      throw new UsageError('--out writes a static file; it takes no --host or --access')
    }
    if (values.out !== undefined && values.approve === true) {
      throw new UsageError('--out writes a static file; it cannot take decisions (--approve)')
    }
    if (values.out !== undefined) {
      const { writeStaticViewer } = await import('../viewer/static.js')
      const out = resolve(values.out)
      try {
        await writeStaticViewer(journal, out)
      } catch (error) {
        throw describe(error, journal)
      }
      io.stdout.write(`wrote ${out}\n`)
      return 0
    }
    const port = values.port === undefined ? 0 : parsePort(values.port)
    let approval: ViewerApprovalHandler | undefined
    let stateFile: string | undefined
    if (values.state !== undefined) {
      const { stateFileApproval } = await import('../viewer/approval-state.js')
      stateFile = resolve(values.state)
      const stateKey = keyFile === undefined ? undefined : await readStateKey(resolve(keyFile))
      const handler = stateFileApproval(stateFile, stateKey === undefined ? {} : { stateKey })
      await handler.check().catch((error: unknown) => {
        const code = (error as { code?: unknown } | undefined)?.code
        throw code === 'ENOENT' ? new ConfigError('--state', `not found: ${stateFile}`) : error
      })
      approval = handler
    }
    const access = values.access === undefined ? undefined : await readAccess(resolve(values.access))
    const host = values.host
    await checkExposure(host, access, approval !== undefined)
    const own = await credentialsOf(values, undefined)
    const { startViewer } = await import('../viewer/server.js')
    try {
      const server = await startViewer({
        journal,
        port,
        approval,
        ...(host === undefined ? {} : { host }),
        ...(access === undefined ? {} : { access }),
        ...(own === undefined ? {} : { credentials: own.credentials }),
      }).catch((error: unknown) => {
        throw describe(error, journal)
      })
      const deciding = stateFile === undefined ? '' : `, recording decisions in ${stateFile}`
      io.stdout.write(`toolgate viewer on ${server.url} following ${journal}${deciding} (Ctrl-C stops)\n`)
      await stopRequested()
      await server.close()
    } finally {
      await own?.close()
    }
    return 0
  },
}

/** `view --store URL`: the store's journal, live, with decisions recorded in the store. */
async function viewStore(
  values: ReturnType<typeof parse>['values'],
  positionals: readonly string[],
  io: Parameters<CliCommand['run']>[1],
): Promise<number> {
  if (positionals.length > 0) throw new UsageError("--store shows the store's journal; it takes no JOURNAL file")
  if (values.out !== undefined) throw new UsageError('--store serves the journal live; it takes no --out')
  if (values.state !== undefined || values['state-key-file'] !== undefined)
    throw new UsageError('--store records decisions in the store; it takes no --state or --state-key-file')
  const { storeFlag, openConfiguredStore } = await import('../gateway/index.js')
  const config = storeFlag(values.store as string)
  if (typeof config === 'string') throw new UsageError(config)
  const port = values.port === undefined ? 0 : parsePort(values.port)
  const access = values.access === undefined ? undefined : await readAccess(resolve(values.access))
  const host = values.host
  await checkExposure(host, access, values.approve === true)
  const own = await credentialsOf(values, config.url)
  const store = await openConfiguredStore(config)
  try {
    const { storeApproval } = await import('../viewer/store-source.js')
    const { startViewer } = await import('../viewer/server.js')
    const where = (await store.status()).where
    const server = await startViewer({
      journal: where,
      title: 'toolgate store',
      store,
      port,
      ...(values.approve === true ? { approval: storeApproval(store) } : {}),
      ...(host === undefined ? {} : { host }),
      ...(access === undefined ? {} : { access }),
      ...(own === undefined ? {} : { credentials: own.credentials }),
    }).catch((error: unknown) => {
      throw describe(error, where)
    })
    const deciding = values.approve === true ? ', recording decisions in the store' : ''
    io.stdout.write(`toolgate viewer on ${server.url} following ${where}${deciding} (Ctrl-C stops)\n`)
    await stopRequested()
    await server.close()
  } finally {
    await own?.close()
    await store.close()
  }
  return 0
}

export default view
