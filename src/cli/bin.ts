#!/usr/bin/env node
// The package's `toolgate` executable. The build also writes it as CommonJS, dist/cli/bin.cjs (the
// `bin` of package.json): a CommonJS entry starts without Node's ES module loader, which takes
// several milliseconds of every start, all before `serve` can spawn its upstream servers. Hence
// no top-level await here.
import { loadCli } from './load-cli.js'

const argv = process.argv.slice(2)
void loadCli(argv)
  .then(({ main }) => main(argv, { stdout: process.stdout, stderr: process.stderr }))
  .then((code) => {
    process.exitCode = code
    // Whatever still holds the event loop (a child an upstream server left behind) must not keep a finished command alive.
    setTimeout(() => process.exit(code), 2000).unref()
  })
