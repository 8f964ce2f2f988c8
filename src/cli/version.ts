import { createRequire } from 'node:module'

/** The package version (src/cli and dist/cli both sit two levels below package.json). */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version

/** What `serve` calls itself to its clients. */
export const SERVER_INFO = { name: 'toolgate', version: VERSION } as const
