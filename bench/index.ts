// `npm run bench`: every benchmark in one process run, each printing a markdown table.
const suites = [
  'validator',
  'pipeline',
  'builds',
  'registry',
  'code-mode',
  'code-mode-runtimes',
  'code-mode-type-check',
  'journal',
  'bash-sandbox',
  'search',
  'policy',
  'policy-conditions',
  'tool-search',
  'tool-search-eval',
  'native-search',
  'import',
  'auth',
  'metrics',
] as const
for (const suite of suites) {
  const module = (await import(`./${suite}.bench.ts`)) as { run: () => Promise<unknown> }
  await module.run()
}

export {}
