/**
 * Concept: tools (docs/guide/tools.md). A tool is declared once: a name, a description, typed
 * parameters, an output schema with a render function, and a body.
 *
 *   npx tsx examples/tools.ts
 */
import { createToolRuntime, defineTool, type ToolArgsOf } from 'toolgate'

// #region define
const searchBooks = defineTool({
  name: 'search_books',
  description: 'Search the library catalogue.',
  parameters: {
    query: { type: 'string', required: true, description: 'words to look for' },
    limit: { type: 'integer', description: 'at most this many (default 5)' },
    format: { type: 'string', enum: ['paper', 'ebook'] },
  },
  output: {
    schema: {
      type: 'array',
      items: {
        type: 'object',
        properties: { title: { type: 'string', required: true }, year: { type: 'integer', required: true } },
        additionalProperties: false,
      },
    },
    // What the model reads. The value itself stays available to your code as result.value.
    render: (args, books) => [
      { type: 'text', text: `${books.length} result(s) for "${args.query}":` },
      ...books.map((book) => ({ type: 'text' as const, text: `- ${book.title} (${book.year})` })),
    ],
  },
  // args is { query: string; limit?: number; format?: 'paper' | 'ebook' }; the return type is checked too.
  execute: async ({ query, limit = 5 }) =>
    [
      { title: 'The Life of the Bee', year: 1901 },
      { title: 'The Bee Book', year: 2016 },
    ]
      .filter((book) => book.title.toLowerCase().includes(query.toLowerCase()))
      .slice(0, limit),
  isConcurrencySafe: () => true, // read-only: may overlap with other safe calls
})

type SearchArgs = ToolArgsOf<typeof searchBooks> // the same type, for your own code
// #endregion define

// #region execute
const { tools } = await createToolRuntime()
tools.register(searchBooks)
console.log(JSON.stringify(tools.schemas()[0].parameters)) // what a model is shown

const args: SearchArgs = { query: 'bee', limit: 1 }
const ok = await tools.execute({
  callId: 'c1',
  name: 'search_books',
  arguments: args,
  signal: AbortSignal.timeout(5_000),
})
console.log(JSON.stringify(ok))

// Bad arguments never reach the body: the result says what is wrong, with paths.
const bad = await tools.execute({
  callId: 'c2',
  name: 'search_books',
  arguments: { query: 42, format: 'scroll', colour: 'red' },
  signal: AbortSignal.timeout(5_000),
})
if (bad.isError) console.log(`${bad.error.info?.code}: ${bad.error.message}`)
// #endregion execute
