// `toolgate serve`: the gateway as an MCP server, over stdio or Streamable HTTP on 127.0.0.1.
import { configPathOf, readSettings, SERVE_FLAGS, serveGateway, type UpstreamReport } from '../gateway/index.js'
import type { CliCommand, CliIo } from './command.js'
import { SERVER_INFO } from './version.js'

const usage = `Usage: toolgate serve [--root DIR] [--bash] [--mode native|code|both] [--config FILE] [--http PORT]
                     [--host ADDR] [--trust-proxy ADDR,...] [--allow-host HOST]... [--allow-origin ORIGIN]...
                     [--max-message-bytes N] [--store URL] [--metrics-port N] [--drain-timeout SECONDS]
                     [--log-format text|json] [--log-level debug|info|warn|error] [--vault-key-file FILE]
                     [--verbose]
       toolgate serve --check [--config FILE] [--root DIR] [--bash] [--mode native|code|both]

Serves toolgate's file tools (read_file, write_file, edit_file, glob, grep, list_dir) rooted in
--root (default: the current directory), bash with --bash, and the tools of every upstream MCP
server in the config file, through the config's policy. With "files": false in the config it
serves no file tools: only the upstreams' tools (and bash with --bash, still run in --root), a
pure gateway. Over stdio by default; with --http PORT as Streamable HTTP at
http://127.0.0.1:PORT/mcp (PORT 0 picks a free port, logged on stderr).

Each server's tools are named "<name>__<tool>", or with the server's "prefix" in front ("" for
none). Two servers (or a server and the gateway) serving the same tool name stop the gateway
before it serves. An upstream server that fails to start, or dies, is logged on stderr by its
config name, its tools are left out (clients get list_changed), and it is retried with backoff
(1 s doubling to 60 s, jittered; the config's "reconnect" sets both) while the others serve.

  --root DIR      workspace the file tools (and bash) are confined to; refused when neither is served
  --bash          also serve the bash tool
  --mode MODE     native (each tool), code (one run_code tool with a typed SDK) or both
  --config FILE   JSON: { root?, files?, bash?, mode?, servers?, policy?, http?, reconnect?,
                  maxMessageBytes?, auth?, limits?, journal?, store?, deferAbove?, metrics? }; flags override it
                  ("files": false serves no file tools; "journal": the audit journal, every call
                  with who made it)
  --check         start every upstream server once, print each one's state on stdout
                  ("connected, N tools, MCP REVISION" or "down: reason", and any tool not
                  served), and exit: 0 when every server is connected and every tool served,
                  1 otherwise
  --http PORT     serve Streamable HTTP on 127.0.0.1:PORT instead of stdio
  --host ADDR     with --http, bind ADDR instead of 127.0.0.1; anything but a loopback address needs
                  "auth" in the config (bearer tokens or an OAuth issuer), or the gateway refuses to start
  --trust-proxy ADDR,...
                  with --http, believe X-Forwarded-For, -Proto and -Host only from these proxy addresses
  --allow-host HOST
                  with --http, also accept this Host (NAME for any port, or NAME:PORT); by default
                  only 127.0.0.1, localhost and [::1] with the bound port are accepted (repeatable)
  --allow-origin ORIGIN
                  with --http, also accept requests from this Origin (e.g. https://app.example);
                  by default only no Origin or a loopback origin with the bound port (repeatable)
  --max-message-bytes N
                  largest JSON-RPC message read from the client (a stdio line or an HTTP body)
                  or an upstream stdio server (default 10485760, 10 MiB); a larger request
                  gets an error response
  --store URL     keep the journal and shared state in PostgreSQL (postgres://…; or the config's
                  "store", whose other keys still apply with this flag): several instances
                  serving one database share them, standing approvals ("always") and
                  rate-limit buckets included. Each MCP session
                  stays on the instance that opened it (route sticky on Mcp-Session-Id); another
                  instance answers 404 naming it, and the client starts a new session
  --metrics-port N
                  with --http, serve GET /metrics (Prometheus) on port N of the same address, without a
                  token, instead of on the MCP port behind its Host check and "auth"
  --drain-timeout SECONDS
                  with --http, on SIGTERM: new MCP requests get 503 with Retry-After, calls in
                  flight get this long to finish (default 30), then are cancelled (and journaled
                  so); then the upstreams and the store close and the process exits 0. A second
                  SIGTERM exits at once (143). Ctrl-C (SIGINT) stops at once. Over stdio, once
                  the client closes stdin, the requests it sent get this long to be answered
  --vault-key-file FILE
                  the 32-byte key (raw, hex or base64) of the per-caller credential vault, for servers
                  with "auth": { "perUser": ... } (default: $TOOLGATE_VAULT_KEY_FILE)
  --log-format FORMAT
                  text (default: "toolgate: message" lines) or json (one object per line:
                  time, level, msg, and callId, tool, subject where known; every call at info)
  --log-level LEVEL
                  debug, info (default), warn or error; arguments and tokens are never logged
  --verbose       log every call on stderr (same as --log-level debug)

SIGHUP re-reads the config file: policy, rules, auth, limits, deferAbove and servers change for
new calls (calls in flight finish under the old config; only changed servers reconnect); a config
that does not validate is refused, logged with its path, and the old one serves on.

With --http, GET /healthz answers 200 while the gateway serves, and GET /readyz 200 once the store
(if any) answers and every server marked "required": true is connected, else 503; neither needs a token.
`

const serve: CliCommand = {
  summary: 'Serve tools (and aggregated MCP servers) as an MCP server',
  usage,
  async run(argv, io) {
    const settings = await readSettings(argv, SERVE_FLAGS)
    return serveGateway(settings, {
      io,
      serverInfo: SERVER_INFO,
      reread: () => readSettings(argv, SERVE_FLAGS),
      configPath: configPathOf(argv),
      check: (upstreams) => printCheck(upstreams, io),
    })
  },
}

/**
 * `serve --check`: one line per upstream, with the protocol revision it speaks (and one per tool it
 * does not serve); 1 when anything is wrong.
 */
function printCheck(upstreams: readonly UpstreamReport[], io: CliIo): number {
  if (upstreams.length === 0) io.stdout.write('no upstream servers in the config\n')
  for (const upstream of upstreams) {
    const count = `${upstream.tools.length} tool${upstream.tools.length === 1 ? '' : 's'}`
    io.stdout.write(
      upstream.status === 'connected'
        ? `servers.${upstream.name}: connected, ${count}${upstream.protocolVersion === undefined ? '' : `, MCP ${upstream.protocolVersion}`}\n`
        : `servers.${upstream.name}: down: ${upstream.error ?? 'unknown'}\n`,
    )
    for (const line of upstream.skipped) io.stdout.write(`  ${line}\n`)
  }
  return upstreams.every((u) => u.status === 'connected' && u.skipped.length === 0) ? 0 : 1
}

export default serve
