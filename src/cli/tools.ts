// `toolgate tools`: what a client's model would see under a configuration, without a client.

import { createLog, loadGateway, readSettings } from '../gateway/index.js'
import type { CliCommand } from './command.js'

const usage = `Usage: toolgate tools [--config FILE] [--root DIR] [--bash] [--mode native|code|both] [--verbose]

Prints each tool the served scope exposes, with its description. Under --mode code that is
run_code alone, whose description carries the typed SDK of every tool a program may call.
With "files": false in the config the file tools are left out, as serve leaves them out.
Upstream servers in the config are started to list their tools. One that is down is named on
stderr and its tools are missing from the list; the exit status is then 1 (see serve --check).
`

const tools: CliCommand = {
  summary: 'Print what the model would see under a configuration',
  usage,
  async run(argv, io) {
    const settings = await readSettings(argv, ['config', 'root', 'bash', 'mode', 'verbose'])
    const { openGateway, refuseCollisions } = await loadGateway()
    const log = createLog(io.stderr, settings.verbose)
    const gateway = await openGateway({ ...settings, check: true }, log)
    try {
      await refuseCollisions(gateway)
      const schemas = gateway.tools.schemas(gateway.agent)
      const text = schemas.map((schema) => `${schema.name}\n${indent(schema.description)}\n`).join('\n')
      io.stdout.write(text)
      const down = gateway.upstreams().filter((upstream) => upstream.status === 'down')
      for (const upstream of down) log.info(`servers.${upstream.name}: down: ${upstream.error ?? 'unknown'}`)
      return down.length ? 1 : 0
    } finally {
      await gateway.close()
    }
  },
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? '' : `  ${line}`))
    .join('\n')
}

export default tools
