// Issue 24: identity-aware policy evaluation at 1,000 rules (target ≤ 20 µs per call). Rules are
// compiled once; a call costs resolving its identity (cold: a new identity every call, no cache)
// or, as the gateway runs, one lookup in the identity's resolved policy (warm).
// Run alone: `npx tsx bench/policy.bench.ts` (or through `npm run bench`).

import type { Identity } from '../src/mcp/protocol/identity.js'
import type { PolicyRule } from '../src/policy/index.js'
import { interleavedMedians, isMain, printTable, type Row } from './util.js'

const TOOLS = Array.from({ length: 200 }, (_, i) => `server${i % 10}__tool_${i}`)

/** 1,000 rules: 700 by subject, 200 by group, 80 by scope, 20 by claim; globs of several shapes. */
function rules(): PolicyRule[] {
  const out: PolicyRule[] = []
  for (let i = 0; i < 700; i++)
    out.push({ who: { subject: [`user${i}`] }, allow: [`server${i % 10}__*`], deny: [`*_${i % 200}`] })
  for (let i = 0; i < 200; i++)
    out.push({ who: { group: [`group${i}`] }, allow: [`server${i % 10}__tool_?${i % 10}`], ask: ['*write*'] })
  for (let i = 0; i < 80; i++) out.push({ who: { scope: [`scope:${i}`] }, allow: ['*'], timeoutMs: { '*': 1000 } })
  for (let i = 0; i < 20; i++) out.push({ who: { claim: { department: [`dept${i}`] } }, deny: ['server9__*'] })
  return out
}

function identity(i: number): Identity {
  return {
    subject: `user${i % 700}`,
    groups: [`group${i % 200}`, `group${(i + 7) % 200}`, 'everyone'],
    scopes: [`scope:${i % 80}`],
    claims: { department: `dept${i % 20}` },
  }
}

// The built module (`npm run build`), as the other per-call benchmarks measure: tsx's keepNames
// would add a defineProperty to every closure the resolve step makes.
const { compileRules } = (await import(
  new URL('../dist/gateway/policy-rules.js', import.meta.url).href
)) as typeof import('../src/gateway/policy-rules.js')

export async function run(): Promise<Row[]> {
  const compiled = compileRules(rules())
  const identities = Array.from({ length: 1000 }, (_, i) => identity(i))
  let n = 0
  const resolved = identities.map((who) => compiled.resolve(who))
  // Interleaved over seven rounds, medians kept: the machine is shared, and load falls on all three alike.
  const [cold, warm, key] = await interleavedMedians([
    () => {
      n++
      return compiled.resolve(identities[n % identities.length]).refusal(TOOLS[n % TOOLS.length])
    },
    () => {
      n++
      const policy = resolved[n % resolved.length]
      const name = TOOLS[n % TOOLS.length]
      return [policy.refusal(name), policy.ask(name), policy.timeout(name)]
    },
    () => {
      n++
      return compiled.keyOf(identities[n % identities.length])
    },
  ])
  const rows: Row[] = [
    { name: '1,000 rules: resolve a new identity + decide one name (cold)', avgNs: cold },
    { name: "1,000 rules: refusal + ask + timeout from the identity's resolved policy (warm)", avgNs: warm },
    { name: "the identity's scope key (per new session)", avgNs: key },
  ]
  printTable('Identity-aware policy at 1,000 rules (issue 24)', rows)
  return rows
}

if (isMain(import.meta.url)) await run()
