// TypeDoc plugin: the API reference is user documentation, so the maintainers' cross-references
// in doc comments (requirement ids such as `(R-JSON-1)`, `(issue #14)`) are dropped from it. The
// source comments keep them for maintainers. .ci/run fails if a generated page still shows one.
import { Converter } from 'typedoc'

// A parenthesised list of references: "(R-DSL-7)", "(R-JSCHEMA-2, R-DSL-5)", "(R-EXEC-4, issue #14)".
const REF = String.raw`(?:R-[A-Z]+(?:-\d+(?:\/\d+)?)?|issue #?\d+)`
const PARENTHESISED = new RegExp(String.raw` ?\(${REF}(?:, ?${REF})*\)`, 'g')
const BARE = new RegExp(String.raw`\b${REF}\b:? ?`, 'g')

/** @param {string} text */
export function plain(text) {
  return text.replace(PARENTHESISED, '').replace(BARE, '')
}

/** @param {import('typedoc').Comment | undefined} comment */
function strip(comment) {
  if (!comment) return
  for (const part of comment.summary) part.text = plain(part.text)
  for (const tag of comment.blockTags) for (const part of tag.content) part.text = plain(part.text)
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    for (const reflection of Object.values(context.project.reflections)) {
      strip(reflection.comment)
      if ('signatures' in reflection) for (const signature of reflection.signatures ?? []) strip(signature.comment)
    }
  })
}
