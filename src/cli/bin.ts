#!/usr/bin/env node
// The package's `toolgate` executable.
import { main } from './main.js'

const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr })
process.exitCode = code
// Whatever still holds the event loop (a child an upstream server left behind) must not keep a finished command alive.
setTimeout(() => process.exit(code), 2000).unref()
