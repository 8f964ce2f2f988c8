// Issue 37, items 1 and 2: the config keys for operating `serve --http` ("required" on a server
// entry, "metrics") and the --metrics-port flag are checked like every other key, with their path.
import { describe, expect, it } from 'vitest'
import { UsageError } from '../../src/cli/command.js'
import { ConfigError } from '../../src/errors/config-error.js'
import { parseConfig } from '../../src/gateway/config.js'
import { SERVE_FLAGS } from '../../src/gateway/serve-spawn.js'
import { readSettings } from '../../src/gateway/settings.js'

const issuesOf = (config: unknown): string => {
  try {
    parseConfig(JSON.stringify(config), 'toolgate.json')
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('expected a ConfigError')
}

describe('"required" and "metrics" in the config (issue 37)', () => {
  it('keeps a valid required flag on stdio and url servers, and metrics.identityLabel', () => {
    const config = parseConfig(
      JSON.stringify({
        servers: {
          a: { command: 'x', required: true },
          b: { url: 'http://127.0.0.1:1/mcp', required: false },
        },
        metrics: { identityLabel: true },
      }),
      'toolgate.json',
    )
    expect(config.servers?.a?.required).toBe(true)
    expect(config.servers?.b?.required).toBe(false)
    expect(config.metrics).toEqual({ identityLabel: true })
  })

  it('reports each bad value with its path', () => {
    const message = issuesOf({
      servers: { github: { command: 'x', required: 'yes' }, web: { url: 'http://127.0.0.1:1/mcp', required: 1 } },
      metrics: { identityLabel: 'subject', labels: [] },
    })
    expect(message).toContain('servers.github.required: expected true or false, got "yes"')
    expect(message).toContain('servers.web.required: expected true or false, got 1')
    expect(message).toContain('metrics.identityLabel: expected true or false, got "subject"')
    expect(message).toContain('metrics.labels: unknown key (expected "identityLabel")')
    expect(issuesOf({ metrics: true })).toContain('metrics: expected an object { identityLabel? }')
  })

  it('--metrics-port needs --http, a port, and not the MCP port', async () => {
    await expect(readSettings(['--metrics-port', '9100'], SERVE_FLAGS)).rejects.toThrow(
      new UsageError('--metrics-port only applies with --http'),
    )
    await expect(readSettings(['--http', '0', '--metrics-port', 'x'], SERVE_FLAGS)).rejects.toThrow(
      '--metrics-port: expected a port number (0-65535), got "x"',
    )
    await expect(readSettings(['--http', '8080', '--metrics-port', '8080'], SERVE_FLAGS)).rejects.toThrow(
      '--metrics-port: expected a port other than the --http port',
    )
    expect((await readSettings(['--http', '8080', '--metrics-port', '9100'], SERVE_FLAGS)).metricsPort).toBe(9100)
  })
})
