// `toolgate policy explain|test`: the config's policy decided offline, for one call or a table of
// expected decisions (a team keeps its policy under review in CI). Quotas are reported, not counted.
import { readFile } from 'node:fs/promises'
import { loadConfig } from '../gateway/index.js'
import {
  compileChecked,
  enforcePolicyDocument,
  MemoryQuotaCounter,
  type PolicyCall,
  type PolicyDecision,
} from '../policy/index.js'
import { isRecord } from '../util/is-record.js'
import { type CliCommand, type CliIo, UsageError } from './command.js'

const usage = `Usage: toolgate policy explain --config FILE [--as SUBJECT] [--group G …] [--scope S …]
                              --tool NAME [--args JSON] [--parent TOOL]
       toolgate policy test --config FILE CASES.json

explain prints what the config's policy decides for one call: allow, deny, ask (or quota), the
rules that matched, the one that decided, the deadline, the quotas the call counts against and
the policy's digest. Without --as the call has no identity (stdio, or HTTP without auth).

test runs a JSON array of cases, each
  { "name"?, "as"?, "groups"?, "scopes"?, "claims"?, "tool", "args"?, "parentTool"?,
    "expect": "allow" | "deny" | "ask", "rule"? }
and prints one line per case; the exit status is 1 when any decision (or deciding rule, when
"rule" is given) differs from the expected one, 2 for a usage or config error.
`

interface Flags {
  config?: string
  as?: string
  groups: string[]
  scopes: string[]
  tool?: string
  args?: string
  parent?: string
  positional: string[]
}

function parseFlags(argv: readonly string[]): Flags {
  const flags: Flags = { groups: [], scopes: [], positional: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const next = argv[++i]
      if (next === undefined) throw new UsageError(`${arg} needs a value`)
      return next
    }
    if (arg === '--config') flags.config = value()
    else if (arg === '--as') flags.as = value()
    else if (arg === '--group') flags.groups.push(value())
    else if (arg === '--scope') flags.scopes.push(value())
    else if (arg === '--tool') flags.tool = value()
    else if (arg === '--args') flags.args = value()
    else if (arg === '--parent') flags.parent = value()
    else if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`)
    else flags.positional.push(arg)
  }
  return flags
}

async function explainerOf(file: string | undefined) {
  if (file === undefined) throw new UsageError('--config FILE is required')
  const config = await loadConfig(file)
  const policy = compileChecked(config.policy ?? {})
  // A scope of its own: no call runs, so no listener is ever reached.
  const { Context } = await import('cordis')
  const enforcement = enforcePolicyDocument(new Context(), policy, {
    identityOf: () => undefined,
    quotas: new MemoryQuotaCounter(),
  })
  return (call: PolicyCall) => enforcement.explain(call)
}

function describe(decision: PolicyDecision): string {
  const lines = [`decision: ${decision.decision}`]
  lines.push(`decided by: ${decision.rule?.label ?? '(no rule: the top level lets it through)'}`)
  if (decision.reason !== undefined) lines.push(`reason: ${decision.reason}`)
  lines.push(`matched: ${decision.matched.length ? decision.matched.map((rule) => rule.label).join(', ') : '(none)'}`)
  lines.push(`deadline: ${decision.deadlineMs === undefined ? 'none' : `${decision.deadlineMs} ms`}`)
  for (const check of decision.quotas)
    lines.push(`quota: ${check.rule.label} (${check.quota.calls} calls per ${check.quota.per}, by ${check.quota.by})`)
  lines.push(`policy: ${decision.policy}`)
  return `${lines.join('\n')}\n`
}

function parseArgs(text: string | undefined, at: string): unknown {
  if (text === undefined) return {}
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${at}: not valid JSON: ${(error as Error).message}`)
  }
}

async function explain(flags: Flags, io: CliIo): Promise<number> {
  if (flags.tool === undefined) throw new UsageError('--tool NAME is required')
  const decide = await explainerOf(flags.config)
  const decision = await decide({
    tool: flags.tool,
    args: parseArgs(flags.args, '--args'),
    ...(flags.as !== undefined ? { identity: { subject: flags.as, groups: flags.groups, scopes: flags.scopes } } : {}),
    ...(flags.parent !== undefined ? { parentTool: flags.parent, depth: 1 } : {}),
  })
  io.stdout.write(describe(decision))
  return 0
}

async function test(flags: Flags, io: CliIo): Promise<number> {
  const [file, ...rest] = flags.positional
  if (file === undefined || rest.length) throw new UsageError('give one CASES.json file')
  const decide = await explainerOf(flags.config)
  const cases: unknown = parseArgs(await readFile(file, 'utf8'), file)
  if (!Array.isArray(cases)) throw new UsageError(`${file}: expected an array of cases`)
  let failed = 0
  for (const [i, item] of cases.entries()) {
    const at = `${file}[${i}]`
    if (!isRecord(item) || typeof item.tool !== 'string' || typeof item.expect !== 'string')
      throw new UsageError(
        `${at}: expected { tool, expect, as?, groups?, scopes?, claims?, args?, parentTool?, rule? }`,
      )
    const strings = (value: unknown, key: string): string[] => {
      if (value === undefined) return []
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value
      throw new UsageError(`${at}.${key}: expected an array of strings`)
    }
    const identity =
      typeof item.as === 'string'
        ? {
            subject: item.as,
            groups: strings(item.groups, 'groups'),
            scopes: strings(item.scopes, 'scopes'),
            claims: isRecord(item.claims) ? item.claims : {},
          }
        : undefined
    const decision = await decide({
      tool: item.tool,
      args: item.args ?? {},
      ...(identity ? { identity } : {}),
      ...(typeof item.parentTool === 'string' ? { parentTool: item.parentTool, depth: 1 } : {}),
    })
    const name = typeof item.name === 'string' ? item.name : `${item.tool} as ${identity?.subject ?? '(no identity)'}`
    const ruleOk = item.rule === undefined || decision.rule?.label === item.rule
    if (decision.decision === item.expect && ruleOk) io.stdout.write(`ok    ${name}: ${decision.decision}\n`)
    else {
      failed++
      io.stdout.write(
        `FAIL  ${name}: expected ${item.expect}${item.rule !== undefined ? ` by ${String(item.rule)}` : ''}, got ${decision.decision} by ${decision.rule?.label ?? '(no rule)'}${decision.reason ? ` (${decision.reason})` : ''}\n`,
      )
    }
  }
  io.stdout.write(`${cases.length - failed} passed, ${failed} failed\n`)
  return failed ? 1 : 0
}

const policy: CliCommand = {
  summary: "Explain the config policy's decision for a call, or test a table of expected decisions",
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv
    const flags = parseFlags(rest)
    if (sub === 'explain') return explain(flags, io)
    if (sub === 'test') return test(flags, io)
    throw new UsageError(sub === undefined ? 'give explain or test' : `unknown subcommand ${sub}`)
  },
}

export default policy
