// The providers subpath: its public names, and SDKs kept out of every runtime import graph (issue #12).
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as providers from '../../src/providers/index.js'

const SDKS = ['openai', '@anthropic-ai/sdk', '@google/genai', 'ai']
const dir = join(import.meta.dirname, '../../src/providers')

describe('toolgate/providers', () => {
  it('exports the promised functions', () => {
    for (const name of ['toProviderTools', 'parseToolCalls', 'toProviderMessages', 'runModelLoop'] as const)
      expect(providers[name]).toBeTypeOf('function')
  })

  it('reaches no SDK, types included, so it type-checks with none installed (issue 25)', () => {
    // Every declaration file a consumer's compiler reads for toolgate/providers (the built
    // package's .d.ts graph; test/build-once.ts builds it), through its relative imports.
    const seen = new Set<string>()
    const visit = (file: string): void => {
      if (seen.has(file)) return
      seen.add(file)
      const source = readFileSync(file, 'utf8')
      for (const match of source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/gm)) {
        const specifier = match[1]
        const sdk = SDKS.some((s) => specifier === s || specifier.startsWith(`${s}/`))
        expect(sdk, `${file} imports ${specifier}`).toBe(false)
        if (specifier.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/, '.d.ts')))
      }
      expect(source, file).not.toMatch(/import\(\s*['"](openai|@anthropic-ai|@google\/genai|ai)\b/)
    }
    visit(join(import.meta.dirname, '../../dist/providers/index.d.ts'))
    expect(seen.size).toBeGreaterThan(10)
  })

  it('has one subpath per SDK, each exporting its adapters', async () => {
    const subpaths = {
      openai: ['openAIChatModel', 'openAIResponsesModel'],
      anthropic: ['anthropicModel'],
      gemini: ['geminiModel'],
      'ai-sdk': ['toAiSdkTools'],
    }
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'))
    for (const [sub, names] of Object.entries(subpaths)) {
      expect(pkg.exports[`./providers/${sub}`]).toEqual({
        types: `./dist/providers/${sub}/index.d.ts`,
        import: `./dist/providers/${sub}/index.js`,
      })
      const module = await import(`../../src/providers/${sub}/index.ts`)
      expect(Object.keys(module).sort()).toEqual(names)
    }
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
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue
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
