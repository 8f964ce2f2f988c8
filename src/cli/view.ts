// `toolgate view JOURNAL [--port N] [--out FILE.html]`: the session viewer.
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError } from '../errors/config-error.js'
import { stateKeyBytes } from '../providers/state-seal.js'
import type { ViewerApprovalHandler } from '../viewer/approval-state.js'
import { type CliCommand, UsageError } from './command.js'

const usage = `Usage: toolgate view JOURNAL [--port N] [--approve --state FILE [--state-key-file KEY]] [--out FILE.html]

Serves the session recorded in JOURNAL on http://127.0.0.1 (only) and follows the file as it grows.

Flags:
  --port N         port on 127.0.0.1 (default: any free port)
  --approve        offer approve / deny buttons on calls waiting for approval; needs --state
  --state FILE     the suspended turn's state (the JSON 'state' of an 'approval-required' result);
                   a decision is recorded there, once per call, and applied by resumeModelLoop
  --state-key-file KEY
                   the key the program seals its states with (the file's exact bytes, as passed to
                   runModelLoop's stateKey; default: $TOOLGATE_STATE_KEY_FILE): only a state whose
                   seal verifies is touched, and it is sealed again with the decision in it.
                   Without a key, a sealed state is refused
  --out FILE.html  write the view as one self-contained HTML file instead of serving it
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
        out: { type: 'string' },
        approve: { type: 'boolean' },
        state: { type: 'string' },
        'state-key-file': { type: 'string' },
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

const view: CliCommand = {
  summary: 'Show a session journal as cards in a web page (live), or write it as one HTML file',
  usage,
  async run(argv, io) {
    const { values, positionals } = parse(argv)
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
    const { startViewer } = await import('../viewer/server.js')
    const server = await startViewer({ journal, port, approval }).catch((error: unknown) => {
      throw describe(error, journal)
    })
    const deciding = stateFile === undefined ? '' : `, recording decisions in ${stateFile}`
    io.stdout.write(`toolgate viewer on ${server.url} following ${journal}${deciding} (Ctrl-C stops)\n`)
    await stopRequested()
    await server.close()
    return 0
  },
}

export default view
