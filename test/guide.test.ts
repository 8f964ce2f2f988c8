// The user guide stands alone and cannot rot (issue 17): its code blocks are regions of the
// examples CI runs, its links resolve, and it cites nothing outside the repository.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { guidePages, pageIncludes, ROOT, unincludedBlocks } from '../scripts/sync-guide.js'

const pages = guidePages()
const userDocs = [...pages, 'README.md']

describe('the guide', () => {
  it('has the pages the index promises', () => {
    expect(pages.length).toBeGreaterThanOrEqual(17)
    const index = readFileSync(join(ROOT, 'docs/guide/README.md'), 'utf8')
    for (const page of pages.filter((page) => !page.endsWith('README.md'))) {
      expect(index, `docs/guide/README.md links ${page}`).toContain(page.replace('docs/guide/', ''))
    }
  })

  it.each(pages)('%s shows the examples exactly (npx tsx scripts/sync-guide.ts --write)', (page) => {
    expect(unincludedBlocks(page), 'a ts block without an include line').toBe(0)
    for (const include of pageIncludes(page)) {
      expect(include.shown, `${include.file}#${include.region}`).toBe(include.actual)
      expect(include.shown.trim().length).toBeGreaterThan(0)
    }
  })

  it.each(userDocs)('%s: relative links resolve', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8')
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      expect(existsSync(join(ROOT, dirname(page), target)), `${page} links ${target}`).toBe(true)
    }
  })

  it.each(userDocs)('%s cites no requirement ids and no files outside the repository', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8')
    expect(text).not.toMatch(/\bR-[A-Z]+-\d+/)
    expect(text).not.toMatch(/SPEC\.md|\/work\/|shared\/seed|tools\.ko\.md/)
  })

  it('every example imports toolgate by its package name', () => {
    const examples = readdirSync(join(ROOT, 'examples')).filter((file) => file.endsWith('.ts'))
    expect(examples.length).toBeGreaterThan(10)
    for (const file of examples) {
      const source = readFileSync(join(ROOT, 'examples', file), 'utf8')
      expect(source, file).not.toMatch(/from '\.\.\/src\//)
    }
  })
})
