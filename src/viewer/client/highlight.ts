// Syntax highlighting as data: lowlight (highlight.js grammars) returns a syntax tree, never an
// HTML string, so highlighted code reaches the page as text nodes and class names only.
import bash from 'highlight.js/lib/languages/bash'
import c from 'highlight.js/lib/languages/c'
import cpp from 'highlight.js/lib/languages/cpp'
import css from 'highlight.js/lib/languages/css'
import diff from 'highlight.js/lib/languages/diff'
import go from 'highlight.js/lib/languages/go'
import ini from 'highlight.js/lib/languages/ini'
import java from 'highlight.js/lib/languages/java'
import javascript from 'highlight.js/lib/languages/javascript'
import json from 'highlight.js/lib/languages/json'
import markdown from 'highlight.js/lib/languages/markdown'
import python from 'highlight.js/lib/languages/python'
import rust from 'highlight.js/lib/languages/rust'
import shell from 'highlight.js/lib/languages/shell'
import sql from 'highlight.js/lib/languages/sql'
import typescript from 'highlight.js/lib/languages/typescript'
import xml from 'highlight.js/lib/languages/xml'
import yaml from 'highlight.js/lib/languages/yaml'
import { createLowlight } from 'lowlight'

// The languages agents touch most; others render as plain text. (All of lowlight's `common` set
// would nearly double the page script: 173 KB against 89 KB minified.)
const lowlight = createLowlight({
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  ini,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
})

// Language hints from `languageFromPath` (editor-style names) → highlight.js grammar names.
const ALIASES: Record<string, string> = {
  shellscript: 'bash',
  zsh: 'bash',
  tsx: 'typescript',
  jsx: 'javascript',
  jsonc: 'json',
  json5: 'json',
  html: 'xml',
  vue: 'xml',
  svelte: 'xml',
  toml: 'ini',
  dockerfile: 'bash',
  scss: 'css',
  less: 'css',
}

/** One run of text with the highlight classes that apply to it. */
export interface Segment {
  text: string
  className: string
}

interface HastNode {
  type: string
  value?: string
  properties?: { className?: unknown }
  children?: HastNode[]
}

function grammarOf(lang: string | null | undefined): string | undefined {
  if (lang === null || lang === undefined) return undefined
  const name = ALIASES[lang] ?? lang
  return lowlight.registered(name) ? name : undefined
}

function flatten(node: HastNode, classes: string[], out: Segment[]): void {
  if (node.type === 'text') {
    out.push({ text: node.value ?? '', className: classes.join(' ') })
    return
  }
  let next = classes
  const cls = node.properties?.className
  if (Array.isArray(cls)) next = classes.concat(cls.filter((c): c is string => typeof c === 'string'))
  for (const child of node.children ?? []) flatten(child, next, out)
}

/**
 * `code` cut into lines of highlighted segments (a line never spans segments across `\n`). An
 * unknown language, or a text too long to highlight cheaply, gives plain segments.
 */
export function highlightLines(code: string, lang: string | null | undefined, maxChars = 200_000): Segment[][] {
  const grammar = grammarOf(lang)
  let segments: Segment[]
  if (grammar === undefined || code.length > maxChars) segments = [{ text: code, className: '' }]
  else {
    segments = []
    try {
      flatten(lowlight.highlight(grammar, code) as HastNode, [], segments)
    } catch {
      segments = [{ text: code, className: '' }]
    }
  }
  const lines: Segment[][] = [[]]
  for (const seg of segments) {
    const parts = seg.text.split('\n')
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) lines.push([])
      if (parts[i] !== '') lines[lines.length - 1].push({ text: parts[i], className: seg.className })
    }
  }
  if (lines.length > 1 && lines[lines.length - 1].length === 0 && code.endsWith('\n')) lines.pop()
  return lines
}
