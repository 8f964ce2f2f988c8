// `when` expressions: CEL, compiled once when the policy loads, evaluated per call within fixed bounds.
import { type ASTNode, Environment } from '@marcbachmann/cel-js'

/** The longest `when` text accepted, in characters. */
export const MAX_WHEN_LENGTH = 4096

/** The parser's structural bounds: an expression past them is refused at load. */
const LIMITS = { maxAstNodes: 1000, maxDepth: 32, maxListElements: 256, maxMapEntries: 256, maxCallArguments: 8 }

/** Macros that iterate: one may not run inside another, so a call costs at most linear in its arguments. */
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter'])

// Made at the first `when`: a config without one never runs the CEL library (the executable's
// bundles then never load it: scripts/bundle-cli.mjs).
let environment: Environment | undefined
function celEnvironment(): Environment {
  environment ??= new Environment({ limits: LIMITS })
    .registerVariable('tool', 'string')
    .registerVariable('args', 'dyn')
    .registerVariable('identity', 'map<string, dyn>')
    .registerVariable('call', 'map<string, dyn>')
    .registerVariable('turn', 'map<string, dyn>')
  return environment
}

/** What a `when` sees of one call. Integers are CEL ints (bigint); `args` is the call's JSON. */
export interface ConditionInput {
  readonly tool: string
  readonly args: unknown
  readonly identity: {
    readonly subject: string
    readonly groups: readonly string[]
    readonly scopes: readonly string[]
    readonly claims: Readonly<Record<string, unknown>>
  }
  readonly call: { readonly parentTool: string; readonly depth: bigint }
  readonly turn: { readonly tools: readonly string[]; readonly counts: Readonly<Record<string, bigint>> }
}

/** A compiled `when`: true, false, or the reason it could not be decided (a denial). */
export type Condition = (input: ConditionInput) => boolean | { readonly error: string }

/** Compile `source`; a problem comes back as text naming the column (1-based). */
export function compileCondition(source: string): Condition | { readonly problem: string } {
  if (source.length > MAX_WHEN_LENGTH)
    return { problem: `longer than ${MAX_WHEN_LENGTH} characters (${source.length})` }
  let parsed: ReturnType<Environment['parse']>
  try {
    parsed = celEnvironment().parse(source)
  } catch (error) {
    return { problem: located(error) }
  }
  const checked = parsed.check()
  if (!checked.valid) return { problem: located(checked.error) }
  if (checked.type !== 'bool' && checked.type !== 'dyn')
    return { problem: `column 1: the expression is of type ${checked.type}, expected bool` }
  const unsafe = boundsProblem(parsed.ast, false)
  if (unsafe !== undefined) return { problem: unsafe }
  return (input) => {
    let value: unknown
    try {
      value = parsed(input as unknown as Record<string, unknown>)
    } catch (error) {
      return { error: firstLine(error) }
    }
    if (typeof value === 'boolean') return value
    return { error: `the expression gave ${typeof value === 'bigint' ? 'an int' : typeof value}, not a bool` }
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0] ?? message
}

/** The parser's message with its 1-based column. */
function located(error: unknown): string {
  const position = (error as { range?: { start?: unknown }; node?: { pos?: unknown } } | undefined) ?? {}
  const start = position.range?.start ?? position.node?.pos
  const column = typeof start === 'number' ? start + 1 : 1
  return `column ${column}: ${firstLine(error)}`
}

/** A node that could make one evaluation cost more than linear in the call's size, or undefined. */
function boundsProblem(node: ASTNode, inComprehension: boolean): string | undefined {
  const column = node.pos + 1
  if (node.op === 'rcall' || node.op === 'call') {
    const name = node.args[0]
    const args = node.op === 'rcall' ? node.args[2] : node.args[1]
    if (COMPREHENSIONS.has(name)) {
      if (inComprehension)
        return `column ${column}: "${name}" inside another comprehension is not allowed (unbounded cost)`
      inComprehension = true
    }
    if (name === 'matches') {
      const pattern = args[args.length - 1]
      if (pattern === undefined || pattern.op !== 'value' || typeof pattern.args !== 'string')
        return `column ${column}: matches() takes a literal pattern (a computed one could be a regex bomb)`
      const risky = regexRisk(pattern.args)
      if (risky !== undefined) return `column ${pattern.pos + 1}: the pattern ${JSON.stringify(pattern.args)} ${risky}`
    }
  }
  for (const child of children(node)) {
    const problem = boundsProblem(child, inComprehension)
    if (problem !== undefined) return problem
  }
  return undefined
}

function children(node: ASTNode): ASTNode[] {
  const out: ASTNode[] = []
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) visit(item)
    else if (typeof value === 'object' && value !== null && 'op' in value) out.push(value as ASTNode)
  }
  if (Array.isArray(node.args)) visit(node.args)
  return out
}

/**
 * Why a regular expression could backtrack without bound, or undefined. Refused: backreferences,
 * lookaround, and a quantified group that holds a quantifier or an alternation (star height above one).
 */
export function regexRisk(pattern: string): string | undefined {
  if (pattern.length > 512) return 'is longer than 512 characters'
  if (/\\[1-9]|\\k</.test(pattern)) return 'uses a backreference'
  if (/\(\?<?[=!]/.test(pattern)) return 'uses lookaround'
  // Group by group: a group holding a quantifier or `|`, itself quantified, can backtrack exponentially.
  const stack: { risky: boolean }[] = []
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') {
      i++
      continue
    }
    if (c === '[') {
      // Skip a character class: its contents are literal.
      i++
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1
      continue
    }
    if (c === '(') {
      stack.push({ risky: false })
      // A group's `?:` or `?<name>` is syntax, not a quantifier.
      if (pattern[i + 1] === '?') while (i < pattern.length && pattern[i] !== ':' && pattern[i] !== '>') i++
    } else if (c === ')') {
      const group = stack.pop()
      const next = pattern[i + 1]
      const quantified = next === '*' || next === '+' || next === '?' || next === '{'
      if (group?.risky && quantified) return 'nests quantifiers (it could backtrack without bound)'
      if (group?.risky && stack.length) stack[stack.length - 1].risky = true
      if (quantified && stack.length) stack[stack.length - 1].risky = true
    } else if ((c === '*' || c === '+' || c === '{' || c === '|') && stack.length) stack[stack.length - 1].risky = true
  }
  return undefined
}
