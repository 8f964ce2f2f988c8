// `toolgate <command> [flags]`: looks the command up in the table and runs it.
import { type CliIo, UsageError } from './command.js'
import { commands } from './commands.js'

function overview(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length))
  const lines = Object.entries(commands).map(([name, entry]) => `  ${name.padEnd(width)}  ${entry.summary}`)
  return `Usage: toolgate <command> [flags]\n\nCommands:\n${lines.join('\n')}\n\nRun toolgate <command> --help for a command's flags.\n`
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    ;(name === undefined ? io.stderr : io.stdout).write(overview())
    return name === undefined ? 2 : 0
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined
  if (entry === undefined) {
    io.stderr.write(`toolgate: unknown command "${name}"\n\n${overview()}`)
    return 2
  }
  const command = (await entry.load()).default
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(command.usage)
    return 0
  }
  try {
    return await command.run(rest, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`toolgate ${name}: ${error.message}\n\n${command.usage}`)
      return 2
    }
    io.stderr.write(`toolgate ${name}: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}
