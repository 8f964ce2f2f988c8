// The tool contract is one folder that imports nothing above it (issue 17): every import and
// re-export in src/contract/ is type-only and names a sibling file (or Cordis, for the `Context`
// an agent carries), so the contract can be read, and depended on, on its own.
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const dir = new URL('../src/contract/', import.meta.url)
const files = readdirSync(dir).filter((file) => file.endsWith('.ts'))

describe('src/contract', () => {
  it('holds the definition, content, execution and result types', () => {
    expect(files.sort()).toEqual(
      ['content.ts', 'execution.ts', 'json-schema.ts', 'json-value.ts', 'tool-definition.ts', 'views.ts'].sort(),
    )
  })

  it.each(files)('%s imports only its siblings (type-only), or Cordis types', (file) => {
    const source = readFileSync(new URL(file, dir), 'utf8')
    const statements = [...source.matchAll(/^(import|export)\s[^;]*?\bfrom\s+'([^']+)'/gm)]
    for (const [statement, , specifier] of statements) {
      expect(statement, `${file}: ${statement}`).toMatch(/^(import|export) type\b/)
      expect(/^\.\/[a-z-]+\.js$/.test(specifier) || specifier === 'cordis', `${file} imports ${specifier}`).toBe(true)
    }
    // Types only: no value is declared, so the contract costs nothing at run time.
    expect(source).not.toMatch(/^export (const|let|function|class|enum|default)\b/m)
  })
})
