// The providers subpath: its public names, and SDKs kept out of every runtime import graph (issue #12).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as providers from '../../src/providers/index.js'

const SDKS = ['openai', '@anthropic-ai/sdk', '@google/genai', 'ai']
const dir = join(import.meta.dirname, '../../src/providers')

describe('toolgate/providers', () => {
  it('exports the promised functions', () => {
    for (const name of [
      'toProviderTools',
      'parseToolCalls',
      'toProviderMessages',
      'runModelLoop',
      'openAIChatModel',
    ] as const)
      expect(providers[name]).toBeTypeOf('function')
  })

  it('is listed in package.json exports with its types', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'))
    expect(pkg.exports['./providers']).toEqual({
      types: './dist/providers/index.d.ts',
      import: './dist/providers/index.js',
    })
    for (const sdk of SDKS) {
      expect(pkg.peerDependenciesMeta[sdk]).toEqual({ optional: true })
      expect(pkg.dependencies[sdk]).toBeUndefined()
    }
  })

  it('imports the SDKs as types only, and the package root never imports the providers', () => {
    for (const file of readdirSync(dir)) {
      const source = readFileSync(join(dir, file), 'utf8')
      for (const match of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gm)) {
        const [, , typeOnly, specifier] = match
        const sdk = SDKS.some((s) => specifier === s || specifier.startsWith(`${s}/`))
        if (sdk) expect(typeOnly, `${file} imports ${specifier} at runtime`).toBeDefined()
      }
      expect(source).not.toMatch(/import\(\s*['"](openai|@anthropic-ai|@google\/genai|ai)\b/)
    }
    const root = readFileSync(join(import.meta.dirname, '../../src/index.ts'), 'utf8')
    expect(root).not.toMatch(/providers/)
  })
})
