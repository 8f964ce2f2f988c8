#!/usr/bin/env node
// The package's `toolgate` executable.
import { loadCli } from './load-cli.js'

const argv = process.argv.slice(2)
const { main } = await loadCli(argv)
const code = await main(argv, { stdout: process.stdout, stderr: process.stderr })
process.exitCode = code
// Whatever still holds the event loop (a child an upstream server left behind) must not keep a finished command alive.
setTimeout(() => process.exit(code), 2000).unref()
