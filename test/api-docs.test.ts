// The API reference drops the maintainers' cross-references from doc comments (issue 17); the
// TypeDoc plugin's rewrite, checked on the shapes the sources use.
import { describe, expect, it } from 'vitest'
import { plain } from '../scripts/typedoc-plain-comments.mjs'

describe('TypeDoc plain comments', () => {
  it.each([
    ['Programmatic approval (R-SCHED-3) for tests', 'Programmatic approval for tests'],
    ['not lossless JSON (R-JSON-1/2); `path` names', 'not lossless JSON; `path` names'],
    ['outside the enforced subset (R-JSCHEMA-2, R-DSL-5).', 'outside the enforced subset.'],
    ['Continue a turn (issue #14). Applies', 'Continue a turn. Applies'],
    ['the order (R-EXEC-4, issue #14)', 'the order'],
    ['Scheduling and policies (R-SCHED): the batch', 'Scheduling and policies: the batch'],
    ['R-CODE-3: a program fails', 'a program fails'],
  ])('%s', (source, shown) => {
    expect(plain(source)).toBe(shown)
  })

  it('leaves other parentheses and codes alone', () => {
    const text = 'Ends as `TOOL_TIMEOUT` (a deadline in ms, e.g. 30_000) for R2-D2.'
    expect(plain(text)).toBe(text)
  })
})
