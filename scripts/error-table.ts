/**
 * Renders the error-code table of docs/guide/errors.md from src/errors/codes.ts (the one table of
 * codes). `npx tsx scripts/error-table.ts --write` rewrites the page's table; test/errors.test.ts
 * fails while the page and the module disagree.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ERROR_CODES } from '../src/errors/codes.js'

export const ERRORS_PAGE = fileURLToPath(new URL('../docs/guide/errors.md', import.meta.url))
const BEGIN = '<!-- error-table:begin (generated from src/errors/codes.ts) -->'
const END = '<!-- error-table:end -->'

/** The markdown table: one row per code, in the module's order. */
export function renderErrorTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, info]) => {
    const errorClass = 'errorClass' in info ? `\`${info.errorClass}\`` : ''
    return `| \`${code}\` | ${info.surface} | ${errorClass} | ${info.meaning.replaceAll('|', '\\|')} |`
  })
  return ['| code | where | class | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n')
}

/** The table as the page holds it now, or undefined when the markers are missing. */
export function pageErrorTable(page: string): string | undefined {
  const begin = page.indexOf(BEGIN)
  const end = page.indexOf(END)
  return begin < 0 || end < begin ? undefined : page.slice(begin + BEGIN.length, end).trim()
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  const page = readFileSync(ERRORS_PAGE, 'utf8')
  const begin = page.indexOf(BEGIN)
  const end = page.indexOf(END)
  if (begin < 0 || end < begin) throw new Error(`${ERRORS_PAGE}: the error-table markers are missing`)
  writeFileSync(ERRORS_PAGE, `${page.slice(0, begin + BEGIN.length)}\n${renderErrorTable()}\n${page.slice(end)}`)
}
