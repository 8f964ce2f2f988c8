// One table of error codes and one base class (issue 17): every code toolgate produces is a row of
// ERROR_CODES, every error it throws extends ToolgateError, and the guide's table is the module's.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pageErrorTable, renderErrorTable } from '../scripts/error-table.js'
import { UsageError } from '../src/cli/command.js'
import * as codeMode from '../src/code-mode/index.js'
import { ERROR_CODES } from '../src/errors/codes.js'
import * as root from '../src/index.js'
import * as mcp from '../src/mcp/index.js'
import * as presentation from '../src/presentation/index.js'
import * as providers from '../src/providers/index.js'
import { RipgrepPatternError } from '../src/tools/ripgrep.js'

const src = new URL('../src/', import.meta.url)

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'client' ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

// Errors that deliberately stay plain `Error`s, and why.
const PLAIN_ERRORS: Record<string, string> = {
  // Thrown into a Code Mode program's guest: its own fields must be exactly toolName and message.
  ToolCallError: 'src/code-mode/errors.ts',
  // Internal to read_file, which catches it and reports its own message.
  BinaryFileError: 'src/tools/line-reader.ts',
  // The SDK v2 move (issue 35, item 1): errors between toolgate's MCP parts and the SDK, never a
  // caller's. The upstream HTTP transport's HTTP failure, read by the link (Transport contract);
  // an upstream's JSON-RPC error as the link reports it (callers get McpToolError or the relayed
  // JSON-RPC error); a task request's JSON-RPC answer to the MCP client (the SDK sends code and message).
  StreamableHTTPError: 'http-client-transport.ts',
  UpstreamRpcError: 'upstream-client.ts',
  TaskRequestError: 'server-tasks.ts',
}

describe('the error table', () => {
  const thrown = [
    new root.ToolNotFoundError('x'),
    new root.ToolArgsError(['args.a: expected string']),
    new root.ToolOutputError(['value: expected object']),
    new root.ToolDeniedError('x', 'no'),
    new root.ToolSuspendedError('x', 'later'),
    new root.ToolAbortedBeforeDispatchError('x'),
    new root.ToolAbortedError('x'),
    new root.ToolTimeoutError('x', 10),
    new root.RuntimeDisposedError('register'),
    new root.AgentDisposedError('a1', 'execute'),
    new root.ToolRegistrationError('tool "x"', ['name: expected a string']),
    new root.JsonSchemaError(['type: unsupported']),
    new root.JsonValueError('value', 'is undefined'),
    new root.WorkspacePathError('path: outside'),
    new codeMode.CodeRunFailedError('syntax', 'bad', []),
    new mcp.McpToolError('closed'),
    new mcp.McpRequestError('failed', -32603, 'failed'),
    new providers.ModelLoopError('failed', { messages: [], steps: [] }, new Error('cause')),
    new providers.ResumeStateError(['state: edited']),
    new RipgrepPatternError('bad pattern'),
    new root.ConfigError('toolgate.json', ['root: expected a string']),
    new UsageError('unknown flag'),
    new root.JournalReadError('session.jsonl', 'not a regular file (it is a device)'),
  ]

  it.each(thrown.map((error) => [error.name, error] as const))(
    '%s extends ToolgateError and its code is a row naming that class',
    (name, error) => {
      expect(error).toBeInstanceOf(root.ToolgateError)
      expect(error).toBeInstanceOf(Error)
      const row = (ERROR_CODES as Record<string, { errorClass?: string }>)[error.code]
      expect(row, `${name}: ${error.code} is not in ERROR_CODES`).toBeDefined()
      // ToolPipelineError subclasses share one class per code; the others name themselves.
      expect(row.errorClass).toBe(name)
    },
  )

  it('issue 21: no entry point exports a code beside ERROR_CODES (no string constants, no aliases)', () => {
    const entryPoints = { root, codeMode, mcp, providers, presentation }
    const constants = Object.entries(entryPoints).flatMap(([entry, module]) =>
      Object.entries(module)
        .filter(([, value]) => typeof value === 'string' && value in ERROR_CODES)
        .map(([name]) => `${entry}.${name}`),
    )
    expect(constants).toEqual([])
    expect(root.ERROR_CODES).toBe(ERROR_CODES)
  })

  it('issue 21: src declares no constant holding a code, so ERROR_CODES is the one list of them', () => {
    const declared: string[] = []
    for (const file of sourceFiles(src.pathname)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/\bconst (\w+)\s*(?::[^=]+)?=\s*'([A-Z][A-Z0-9_]+)'/g)) {
        if (match[2] in ERROR_CODES) declared.push(`${file}: ${match[1]}`)
      }
    }
    expect(declared).toEqual([])
  })

  it('every UPPER_SNAKE string literal in src is a row or a known non-code', () => {
    // LC_ALL: an environment variable; ERR_WORKER_OUT_OF_MEMORY: Node's code for a worker past its resourceLimits.
    // INVALID_ARGUMENT: the Gemini API's error status, which toolgate/testing's fake server answers with.
    // PROCESSOR_ARCHITECTURE: a Windows environment variable a spawned stdio server inherits.
    // REQUEST_TIMEOUT, CONNECTION_CLOSED, SEND_FAILED: the MCP SDK v2's SdkError codes, which the
    // upstream link turns back into JSON-RPC codes.
    // WASM_HAS_SIMD_SUPPORT: TensorFlow.js' flag, which the 'hybrid' encoder reports (issue 41).
    const notCodes = new Set([
      'LC_ALL',
      'ERR_WORKER_OUT_OF_MEMORY',
      'INVALID_ARGUMENT',
      'PROCESSOR_ARCHITECTURE',
      'REQUEST_TIMEOUT',
      'CONNECTION_CLOSED',
      'SEND_FAILED',
      'WASM_HAS_SIMD_SUPPORT',
    ])
    const unknown: string[] = []
    for (const file of sourceFiles(src.pathname)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) {
        if (!(match[1] in ERROR_CODES) && !notCodes.has(match[1])) unknown.push(`${file}: ${match[1]}`)
      }
    }
    expect(unknown).toEqual([])
  })

  it('every error class in src extends ToolgateError (or is a listed exception)', () => {
    const plain: string[] = []
    for (const file of sourceFiles(src.pathname)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/^export (?:abstract )?class (\w+) extends Error\b/gm)) {
        if (match[1] !== 'ToolgateError' && !file.endsWith(PLAIN_ERRORS[match[1]] ?? '\0')) plain.push(match[1])
      }
    }
    expect(plain).toEqual([])
  })

  it('issue 21: src throws no plain Error, TypeError or RangeError outside the listed internal cases', () => {
    // Each entry: how the thrown message starts, and why it may stay a plain error. Everything else
    // a toolgate API throws at its caller must extend ToolgateError (a bad option is a ConfigError).
    const internal: [RegExp, string][] = [
      // Failures of a first-party tool's body: the pipeline turns them into the call's failed result
      // (TOOL_ERROR), where the model reads the path-qualified message naming its own argument.
      [/^`(path|\$\{argName\}|\$\{name\}|old_string|new_string|pattern): |^'(old_string|new_string): /, 'tool body'],
      [/^[`'](glob pattern|bash: |grep: |Workspace root )/, 'tool body'],
      [/^'The operation was aborted'/, "a tool body's abort without a reason"],
      // The model's reply is malformed: runModelLoop wraps it in ModelLoopError (MODEL_REQUEST_FAILED).
      [/^'(openAIResponsesModel|openAIChatModel|geminiModel|anthropicModel): the \w+ has no /, 'model reply'],
      // A streamed reply that failed or ended early, and a scripted model past its script: the same.
      [/^`(\$\{api\}: the stream ended|openAIResponsesModel: |anthropicModel: the stream)/, 'model stream'],
      [/^`scriptedModel \(\$\{format\}\): /, 'model reply'],
      // A tools/execute wrapper misusing exec.signal or next(): the call fails as POLICY_ERROR, the
      // code the table documents for it, which a code of the error's own would replace.
      [/^'exec\.signal: a tools\/execute wrapper|^'next\(\) called multiple times'/, 'policy listener'],
      // Inside a Code Mode run: reported as CodeRunFailedError (CODE_RUN_FAILED) or to the guest program.
      [/^'toolgate: QuickJS heap growth|^'the run is over'|^`tool call limit|^`the worker exited/, 'code run'],
      [/^'toolgate: the Code Mode worker entry|^'esbuild produced no worker bundle'/, 'build invariant'],
      // Invariants of toolgate itself (a bug or a broken installation, never a caller's mistake).
      [/^`unexpected type mask|^`viewer asset contains|^`toolgate viewer: the page assets are missing/, 'invariant'],
      [/^'the viewer never runs tools'/, 'invariant'],
      // The hybrid ranker's encoder failing inside prepare(): caught there, reported once, and the
      // search falls back to the text ranker; no caller sees it.
      [/^'the sentence encoder returned no vector'|^`the sentence encoder loaded as/, 'search fallback'],
      // The encoder pool's workers failing, refusing a call or closed (search/encoder-pool.ts): the
      // same path, the ranker catches and reports it once. `message.message` is a worker's answer.
      [/^'the sentence encoder was closed'|^`an encoder worker (exited|failed)|^message\.message\)/, 'search fallback'],
      [/^'encoder-worker runs only as a worker thread'/, 'invariant'],
      // serve answers 401 before a request without an identity reaches the server when auth is on.
      [/^'the request carries no authenticated identity'/, 'invariant'],
      // The Agents SDK always passes a call id to a function tool's execute; without one nothing can run once.
      [/^`toAgentsTools: the Agents SDK called/, 'invariant'],
      // The CLI printing a thrown value that is not an Error, or why its stdio transport ended.
      [/^String\(error\)/, 'cli'],
      [/^`the stdio transport ended: /, 'cli'],
      // The stdio transport reports through the SDK's onerror hook (Transport contract), never to a caller.
      [/^'LineStdioServerTransport already started'|^`stdio: |^`(reading stdin|writing stdout) failed: /, 'transport'],
      // The upstream stdio client transport, the same contract: its errors go to the SDK client
      // (onerror, or start() and send() to the Client that drives it), whose caller gets McpToolError.
      [/^'LineStdioClientTransport already started'|^'Not connected'|^`ReadBuffer exceeded maximum size /, 'transport'],
      [/^'this spawned server already has a transport'/, 'invariant'],
      // The tools/call fast paths (issue 23) report a send that failed to the SDK's onerror hook,
      // with the SDK Protocol's own wording, never to a caller.
      [/^`Failed to send (response|cancellation): /, 'transport'],
      // serve's Streamable HTTP server transport, the same contract: what it refuses is answered to the
      // HTTP client and reported through onerror; send() rejects to the SDK's Protocol that calls it.
      [
        /^httpRefusal\)|^'(Transport already started|Stateless transport cannot be reused|Method not allowed\.|Cannot send a response on a standalone SSE stream|Failed replay events)'?|^`(No connection established for request ID: |the event store issued an event id with a line break)/,
        'transport',
      ],
      // serve taking over the session its first script answered (serve-http.ts): only ever called so.
      [/^'adopt: a fresh session whose first message is its initialize request'/, 'invariant'],
      // The upstream Streamable HTTP client transport (issue 23), the same contract: its errors go
      // to the SDK client (onerror, or start() and send()), whose caller gets McpToolError.
      [
        /^'NodeHttpClientTransport already started|^`Streamable HTTP error: the server(?: sent an event |'s stream sent a message larger| sent a message that exceeded)|^`SSE stream disconnected: |^`Maximum reconnection attempts |^`Failed to reconnect SSE stream: /,
        'transport',
      ],
      // The event store's replay failure goes to the SDK's HTTP transport (EventStore contract);
      // serve answers the client a 400 with the same reason before the SDK would ask.
      [/^this\.refusal\(/, 'transport'],
      // The fetch the SDK's Streamable HTTP client transport uses (FetchLike contract): its failures
      // are the TypeErrors fetch itself rejects with, which the transport reports as the connection's.
      [/^'fetch failed', \{ cause \}|^'terminated'/, 'fetch contract'],
      // The upstream OAuth provider's answers to the SDK's auth flow (OAuthClientProvider contract);
      // the flow fails the connection, whose error names the server.
      [
        /^`the upstream asks for a person to authorize|^`grant "\$\{this\.options\.grant\}" has no authorization code/,
        'oauth provider',
      ],
      // Client credentials bound to one authorization server refuse another (same contract).
      [/^`the upstream's authorization server /, 'oauth provider'],
      // The lean tools/call request's answer failing the result schema: the SDK client's own check,
      // which rejects the request to the link (the caller gets McpToolError).
      [/^`Invalid tools\/call result: /, 'transport'],
      // A task's request to its client after the task ended: answered to the upstream as an error.
      [/^`task \$\{taskId\} has ended`/, 'task'],
    ]
    // prelude.ts is the source text of the guest program inside the sandbox, not host code.
    const guestSource = /code-mode\/prelude\.ts$/
    const plain: string[] = []
    for (const file of sourceFiles(src.pathname)) {
      if (guestSource.test(file)) continue
      const text = readFileSync(file, 'utf8')
      for (const match of text.matchAll(/new (?:Type|Range|Syntax|Reference)?Error\(\s*([^\n]*)/g)) {
        if (!internal.some(([start]) => start.test(match[1])))
          plain.push(`${file.slice(src.pathname.length)}: ${match[1].slice(0, 70)}`)
      }
    }
    expect(plain).toEqual([])
  })

  it('the rows are well-formed', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z_]+$/)
      expect(['result', 'thrown', 'result, thrown', 'mcp']).toContain(info.surface)
      expect(info.meaning).toMatch(/^\S.*\.$/)
    }
  })

  it('docs/guide/errors.md shows exactly this table (npx tsx scripts/error-table.ts --write)', () => {
    const page = readFileSync(new URL('../docs/guide/errors.md', import.meta.url), 'utf8')
    expect(pageErrorTable(page)).toBe(renderErrorTable())
  })
})
