// The per-call path of this build against another build, side by side in one process (issue 21):
// `TOOLGATE_BASELINE=/path/to/other/dist/index.js npx tsx bench/builds.bench.ts`. Both builds run
// the same cases (a cached handle, `ctx.tools.execute`, an agent, the `createToolRuntime()` handle,
// and one pass-through listener per waterfall), interleaved over seven rounds in rotating order,
// medians kept, so machine load falls on both alike. Without the variable it prints how to run it.
import { pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { format, interleavedMedians, isMain, loadBuilt, type Row } from './util.js'

type Build = Awaited<ReturnType<typeof loadBuilt>>

async function casesOf(label: string, build: Build): Promise<Array<[string, () => unknown]>> {
  const echo = () =>
    build.defineTool({
      name: 'echo',
      description: 'Return a constant.',
      parameters: { data: { type: 'json' } },
      output: { schema: { type: 'integer' }, render: () => [{ type: 'text', text: 'ok' }] },
      execute: async () => 1,
    })
  const signal = new AbortController().signal
  const input = { callId: 'c', name: 'echo', arguments: { data: { a: 1 } }, signal }
  const ctx = new Context()
  await ctx.plugin(build.ToolRuntime)
  ctx.tools.register(echo())
  const agent = build.createAgent(ctx, { id: 'bench' })
  const cached = ctx.tools
  const agentCached = agent.ctx.tools
  const created = await build.createToolRuntime()
  created.tools.register(echo())
  const listened = new Context()
  await listened.plugin(build.ToolRuntime)
  listened.tools.register(echo())
  listened.on('tools/pre-execute', (_exec, next) => next())
  listened.on('tools/execute', (_exec, next) => next())
  listened.on('tools/post-execute', (_exec, _result, next) => next())
  const listenedCached = listened.tools
  return [
    [`${label}: cached \`tools.execute(input)\``, () => cached.execute(input)],
    [`${label}: \`ctx.tools.execute(input)\``, () => ctx.tools.execute(input)],
    [`${label}: cached agent handle`, () => agentCached.execute({ ...input, agent })],
    [`${label}: \`createToolRuntime()\` handle`, () => created.tools.execute(input)],
    [`${label}: 1 pass-through listener per waterfall`, () => listenedCached.execute(input)],
  ]
}

export async function run(): Promise<Row[]> {
  const baseline = process.env.TOOLGATE_BASELINE
  if (!baseline) {
    console.log('\n## This build vs another build\n\n(set TOOLGATE_BASELINE to another build’s dist/index.js)')
    return []
  }
  const other = (await import(pathToFileURL(baseline).href)) as Build
  const mine = await casesOf('this build', await loadBuilt())
  const theirs = await casesOf('baseline', other)
  const cases = mine.flatMap((pair, i) => [pair, theirs[i]])
  const ns = await interleavedMedians(cases.map(([, fn]) => fn))
  console.log(`\n## This build vs ${baseline}\n`)
  console.log('| case | this build | baseline | this ÷ baseline |')
  console.log('| --- | ---: | ---: | ---: |')
  const rows: Row[] = []
  for (let i = 0; i < cases.length; i += 2) {
    const name = cases[i][0].replace('this build: ', '')
    console.log(`| ${name} | ${format(ns[i])} | ${format(ns[i + 1])} | ${(ns[i] / ns[i + 1]).toFixed(2)}× |`)
    rows.push({ name, avgNs: ns[i], ratio: `${(ns[i] / ns[i + 1]).toFixed(2)}×` })
  }
  return rows
}

if (isMain(import.meta.url)) await run()
