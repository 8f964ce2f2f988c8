/**
 * The guide's code blocks are regions of the examples, which CI runs. A block is written as
 *
 *   <!-- include: examples/quickstart.ts#tools -->
 *   ```ts
 *   ...
 *   ```
 *
 * and holds the lines between `// #region tools` and `// #endregion tools` of that file.
 * `npx tsx scripts/sync-guide.ts --write` refills every block; test/guide.test.ts fails while a
 * block differs from its region, or a `ts` block in the guide has no include line.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
const INCLUDE = /<!-- include: (\S+?)#(\S+) -->\n```ts\n([\s\S]*?)```/g

/** The markdown files of the guide, relative to the repository root. */
export function guidePages(dir = join(ROOT, 'docs/guide')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return guidePages(path)
    return entry.name.endsWith('.md') ? [relative(ROOT, path)] : []
  })
}

/** The lines of `file` between `// #region name` and `// #endregion name`, without the markers. */
export function exampleRegion(file: string, name: string): string {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`)
  const end = lines.findIndex((line, i) => i > start && line.trim() === `// #endregion ${name}`)
  if (start < 0 || end < 0) throw new Error(`${file}: no region "${name}"`)
  // Blank lines at the edges of a region (Biome wants one after the imports) are not shown.
  return `${lines
    .slice(start + 1, end)
    .join('\n')
    .replace(/^\n+|\n+$/g, '')}\n`
}

/** Every include of a page: where it points, what the page shows, and what the example holds. */
export function pageIncludes(page: string): Array<{ file: string; region: string; shown: string; actual: string }> {
  const text = readFileSync(join(ROOT, page), 'utf8')
  return [...text.matchAll(INCLUDE)].map(([, file, region, shown]) => ({
    file,
    region,
    shown,
    actual: exampleRegion(file, region),
  }))
}

/** `ts` code blocks of a page that no include line introduces. */
export function unincludedBlocks(page: string): number {
  const text = readFileSync(join(ROOT, page), 'utf8')
  const blocks = text.match(/^```ts$/gm)?.length ?? 0
  return blocks - [...text.matchAll(INCLUDE)].length
}

/**
 * The code blocks of one language on a page, in order (the text between the fences). A page that
 * shows one whole program (docs/guide/recipes/build-a-coding-agent.md) is its `ts` blocks joined.
 */
export function pageBlocks(page: string, language: string): string[] {
  const text = readFileSync(join(ROOT, page), 'utf8')
  return [...text.matchAll(new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(([, code]) => code)
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  for (const page of guidePages()) {
    const path = join(ROOT, page)
    const text = readFileSync(path, 'utf8')
    const synced = text.replace(
      INCLUDE,
      (_match, file: string, region: string) =>
        `<!-- include: ${file}#${region} -->\n\`\`\`ts\n${exampleRegion(file, region)}\`\`\``,
    )
    if (synced !== text) {
      writeFileSync(path, synced)
      console.log(`synced ${page}`)
    }
  }
}
