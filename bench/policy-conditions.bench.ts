// Issue 38: a decision with ten rules, two of them with `when`, against today's glob-only decision
// of the same calls (target: at most 2 µs more), and loading a policy of 1,000 rules (target 50 ms).
// Run alone after `npm run build`: `npx tsx bench/policy-conditions.bench.ts`.
import { interleavedMedians, isMain, printTable, type Row } from './util.js'

const { compileRules } = (await import(
  new URL('../dist/gateway/policy-rules.js', import.meta.url).href
)) as typeof import('../src/gateway/policy-rules.js')
const { compilePolicy } = (await import(
  new URL('../dist/policy/index.js', import.meta.url).href
)) as typeof import('../src/policy/index.js')

const TOOLS = ['read_file', 'write_file', 'github__create_issue', 'github__search', 'bash', 'transfer', 'fetch']
/** Each tool's arguments, of the shape its rules read (a failing `when` is a denial, measured apart). */
const ARGS: Record<string, unknown[]> = {
  read_file: [{ path: 'src/a.ts' }],
  write_file: [
    { path: 'src/a.ts', content: 'x' },
    { path: '.github/ci.yml', content: 'x' },
  ],
  github__create_issue: [{ repo: 'acme/web', title: 't' }],
  github__search: [{ q: 'bug' }],
  bash: [{ command: 'ls' }],
  transfer: [{ amount: 50 }, { amount: 250 }],
  fetch: [{ url: 'https://example.test' }],
}
const argsOf = (tool: string, n: number) => ARGS[tool][n % ARGS[tool].length]

/** Ten rules for the caller's groups, plain globs. */
function globRules() {
  return [
    { who: { group: ['dev'] }, allow: ['read_file', 'write_file', 'fetch', 'transfer'] },
    { who: { group: ['dev'] }, allow: ['github__*'], deny: ['github__delete_*'] },
    { who: { group: ['dev'] }, ask: ['bash'], allow: ['bash'] },
    { who: { group: ['ops'] }, allow: ['*'] },
    { who: { subject: ['ci'] }, allow: ['github__create_pull_request'] },
    { who: { group: ['dev'] }, timeoutMs: { bash: 120000 } },
    { who: { group: ['dev'] }, deny: ['secret_*'] },
    { who: { scope: ['mcp'] }, allow: ['list_dir'] },
    { who: { group: ['interns'] }, deny: ['write_file'] },
    { who: { claim: { team: ['docs'] } }, allow: ['glob'] },
  ]
}

/** The same ten, two of them with `when`. */
function conditionalRules() {
  const rules: Record<string, unknown>[] = globRules()
  rules[6] = { who: { group: ['dev'] }, deny: ['write_file'], when: "args.path.startsWith('.github/')" }
  rules[8] = { who: { group: ['dev'] }, ask: ['transfer'], when: 'args.amount > 100' }
  return rules
}

function thousand() {
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < 1000; i++) {
    if (i % 10 === 0)
      out.push({ who: { group: [`g${i}`] }, deny: [`tool_${i}`], when: `args.n > ${i} && tool == 'x${i}'` })
    else out.push({ who: { subject: [`user${i}`] }, allow: [`server${i % 10}__*`], deny: [`*_${i % 200}`] })
  }
  return { rules: out }
}

export async function run(): Promise<Row[]> {
  const identity = { subject: 'alice', groups: ['dev'], scopes: ['mcp'], claims: {} }
  const today = compileRules(globRules() as never).resolve(identity)
  const plain = compilePolicy({ rules: globRules() })
  const conditional = compilePolicy({ rules: conditionalRules() })
  let n = 0
  const [glob, newGlob, withWhen] = await interleavedMedians([
    () => {
      n++
      const name = TOOLS[n % TOOLS.length]
      return [today.refusal(name), today.ask(name), today.timeout(name)]
    },
    () => {
      n++
      const tool = TOOLS[n % TOOLS.length]
      return plain.decide({ tool, args: argsOf(tool, n), identity })
    },
    () => {
      n++
      const tool = TOOLS[n % TOOLS.length]
      return conditional.decide({ tool, args: argsOf(tool, n), identity })
    },
  ])
  const document = thousand()
  const loads: number[] = []
  for (let i = 0; i < 7; i++) {
    const start = performance.now()
    compilePolicy(document)
    loads.push((performance.now() - start) * 1e6)
  }
  const load = loads.sort((a, b) => a - b)[3]
  const rows: Row[] = [
    { name: "ten rules, glob-only: today's static decision (refusal + ask + timeout)", avgNs: glob },
    { name: 'ten rules, glob-only: the policy module decide()', avgNs: newGlob },
    {
      name: 'ten rules, two with when: decide()',
      avgNs: withWhen,
      ratio: `+${((withWhen - glob) / 1e3).toFixed(2)} µs over today`,
    },
    { name: 'load (check + compile) a policy of 1,000 rules, 100 with when', avgNs: load },
  ]
  printTable('Policy conditions (issue 38)', rows)
  return rows
}

if (isMain(import.meta.url)) await run()
