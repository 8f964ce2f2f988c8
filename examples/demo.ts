/**
 * toolgate end-to-end demo (`npm start`): no network, no API key.
 *
 * Boots a runtime with real file tools, a slow tool with a deadline, an agent with a
 * restriction and a guard, the timeout policy and the terminal approval service, then
 * replays a recorded model turn (examples/turn.json) through `executeBatch` in a
 * temporary workspace, printing each call and result as it happens and a summary.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import {
  type BatchCallResult,
  createAgent,
  createBashTool,
  createFsTools,
  createToolRuntime,
  executeBatch,
  Journal,
  TerminalApproval,
  TimeoutPolicy,
  type ToolDefinition,
  type ToolExecutionInput,
  type ToolExecutionResult,
} from 'toolgate'
import {
  genericCallView,
  genericResultView,
  renderToolCallLines,
  renderToolResultLines,
  type ToolCallView,
  type ToolResultView,
} from 'toolgate/presentation'

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Where the demo prints. Default `process.stdout`. */
  output?: NodeJS.WritableStream
  /** Where the terminal approval reads answers. Default `process.stdin`. */
  input?: NodeJS.ReadableStream
  /** ANSI colours. Default: the output is a TTY and `NO_COLOR` is unset. */
  color?: boolean
  /** The recorded turn to replay. Default `examples/turn.json`. */
  turnFile?: string
  /** Where the session journal is written. Default a new file in the temporary directory. */
  journal?: string
}

/** What the demo observed, for callers (and the test). */
export interface DemoSummary {
  readonly workspace: string
  /** The session journal the run wrote (kept after the demo, for `toolgate view`). */
  readonly journal: string
  readonly results: readonly BatchCallResult[]
  /** Largest number of calls that were in flight at the same time. */
  readonly maxInFlight: number
  readonly parallel: readonly string[]
  /** Runs of consecutive parallel calls (each went through the pool together). */
  readonly parallelGroups: ReadonlyArray<readonly string[]>
  readonly exclusive: readonly string[]
  readonly succeeded: readonly string[]
  readonly asked: readonly string[]
  readonly denied: readonly string[]
  readonly timedOut: readonly string[]
  readonly failed: readonly string[]
}

interface RecordedTurn {
  readonly agent: string
  readonly assistant: string
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: unknown }>
}

const WRITE_TOOLS = new Set(['write_file', 'edit_file'])
const MAX_CARD_LINES = 8

/** A slow, cooperative tool: each pass waits 25 ms and observes the signal. Its deadline is 150 ms. */
const indexWorkspace: ToolDefinition = {
  name: 'index_workspace',
  description: 'Build a search index of the workspace, one pass at a time.',
  parameters: {
    type: 'object',
    properties: { passes: { type: 'integer', description: 'Indexing passes to run.' } },
    additionalProperties: false,
  },
  timeoutMs: 150,
  isConcurrencySafe: () => true,
  output: {
    schema: {
      type: 'object',
      properties: { passes: { type: 'integer' } },
      required: ['passes'],
      additionalProperties: false,
    },
    render: (_args, value) => [{ type: 'text', text: `indexed the workspace in ${JSON.stringify(value)} passes` }],
  },
  async execute(args, exec) {
    const passes = (args as { passes?: number }).passes ?? 1
    for (let pass = 0; pass < passes; pass++) await sleep(25, undefined, { signal: exec.signal })
    return { passes }
  },
}

async function createWorkspace(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'toolgate-demo-'))
  await mkdir(join(root, 'src'))
  await mkdir(join(root, 'docs'))
  await writeFile(
    join(root, 'README.md'),
    '# tiny-app\n\nA tiny app used by the toolgate demo.\n\nRun it with `node src/app.ts`.\n',
  )
  await writeFile(
    join(root, 'src', 'app.ts'),
    "export function greet(name: string): string {\n  return 'hello, ' + name\n}\n\nconsole.log(greet('world'))\n",
  )
  await writeFile(join(root, 'src', 'util.ts'), 'export const answer = 42\n')
  await writeFile(join(root, '.env'), 'API_TOKEN=not-for-models\n')
  return root
}

function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined
}

/** Run the demo; resolves with what happened (never rejects on tool failures — they are the point). */
export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const output = options.output ?? process.stdout
  const color = options.color ?? ((output as { isTTY?: boolean }).isTTY === true && (process.env.NO_COLOR ?? '') === '')
  const paint = (code: string, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text)
  const print = (text = '') => {
    output.write(`${text}\n`)
  }
  const card = (lines: string[], indent = '    ') => {
    for (const line of lines.slice(0, MAX_CARD_LINES)) print(`${indent}${line}`)
    if (lines.length > MAX_CARD_LINES) print(`${indent}${paint('2', `… ${lines.length - MAX_CARD_LINES} more lines`)}`)
  }

  const turnFile = options.turnFile ?? fileURLToPath(new URL('./turn.json', import.meta.url))
  const turn = JSON.parse(await readFile(turnFile, 'utf8')) as RecordedTurn
  const workspace = await createWorkspace()
  const journal = options.journal ?? join(tmpdir(), `toolgate-demo-${Date.now()}-${process.pid}.jsonl`)
  const { ctx, tools } = await createToolRuntime()
  const fibers: Array<{ dispose(): Promise<void> }> = []
  try {
    // Deployment-global tools: the real file tools, a shell, and the slow indexer.
    for (const definition of createFsTools({ root: workspace })) tools.register(definition)
    tools.register(createBashTool({ cwd: workspace }))
    tools.register(indexWorkspace)
    fibers.push(await ctx.plugin(Journal, { path: journal }))
    fibers.push(await ctx.plugin(TimeoutPolicy, {}))
    fibers.push(await ctx.plugin(TerminalApproval, { input: options.input ?? process.stdin, output }))

    // The agent: no shell, no secrets, and every write needs approval.
    const agent = createAgent(ctx, { id: turn.agent })
    fibers.push(agent)
    agent.ctx.tools.restrict({ deny: ['bash'] })
    agent.ctx.tools.guard((exec) => {
      const path = (exec.arguments as { path?: unknown } | null)?.path
      return typeof path === 'string' && /(^|\/)\.env$/.test(path) ? 'reading .env secrets is not allowed' : undefined
    })
    const asked = new Set<string>()
    agent.ctx.on('tools/pre-execute', (exec, next) => {
      if (!WRITE_TOOLS.has(exec.name)) return next()
      asked.add(exec.callId)
      return Promise.resolve({ kind: 'ask', reason: 'writes modify the workspace' })
    })

    print(paint('1', 'toolgate demo'))
    print(`  workspace  ${workspace} (temporary)`)
    print(`  agent      ${agent.id}: bash restricted away, .env guarded, writes need approval`)
    print(
      `  model sees ${tools
        .schemas(agent)
        .map((schema) => schema.name)
        .join(', ')}`,
    )
    print(`  assistant  “${turn.assistant}”`)
    print(`  replaying ${turn.toolCalls.length} tool calls from ${turnFile}`)
    print()

    const controller = new AbortController()
    const calls: ToolExecutionInput[] = turn.toolCalls.map((call) => ({
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
      agent,
      signal: controller.signal,
    }))
    let inFlight = 0
    let maxInFlight = 0
    const batch = await executeBatch(tools, calls, {
      maxParallel: 4,
      signal: controller.signal,
      onStart(call, _index, mode) {
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        const definition = tools.get(call.name, agent)
        let view: ToolCallView | undefined
        try {
          view = definition?.presentCall?.(call.arguments)
        } catch {
          view = undefined
        }
        print(`${paint('36', '▶')} ${paint('1', call.callId)} ${call.name} ${paint('2', `[${mode.kind}]`)}`)
        card(renderToolCallLines(view ?? genericCallView(call.name, call.arguments), { color }))
      },
      onResult({ call, result }) {
        inFlight--
        const code = codeOf(result)
        const badge = !result.isError
          ? paint('32', '✓ ok')
          : code === 'TOOL_TIMEOUT'
            ? paint('33', '⏱ timed out')
            : code === 'TOOL_DENIED'
              ? paint('33', '⊘ denied')
              : paint('31', `✗ failed (${code ?? 'error'})`)
        print(`${badge} ${paint('1', call.callId)} ${call.name}${result.isError ? `: ${result.error.message}` : ''}`)
        if (!result.isError) {
          const definition = tools.get(call.name, agent)
          let view: ToolResultView | undefined
          try {
            view = definition?.presentResult?.(call.arguments, result)
          } catch {
            view = undefined
          }
          card(renderToolResultLines(view ?? genericResultView(result), { color }))
        }
      },
    })

    const ids = (pick: (entry: BatchCallResult) => boolean) =>
      batch.results.filter(pick).map((entry) => `${entry.call.callId} ${entry.call.name}`)
    const parallelGroups: string[][] = []
    batch.results.forEach((entry, i) => {
      if (entry.mode.kind !== 'parallel') return
      if (i === 0 || batch.results[i - 1].mode.kind !== 'parallel') parallelGroups.push([])
      parallelGroups[parallelGroups.length - 1].push(`${entry.call.callId} ${entry.call.name}`)
    })
    const approvals = new Map(
      batch.results
        .filter((entry) => asked.has(entry.call.callId))
        .map((entry) => [entry.call.callId, entry.result.isError ? 'not approved' : 'approved, ran'] as const),
    )
    const summary: DemoSummary = {
      workspace,
      journal,
      results: batch.results,
      maxInFlight,
      parallel: ids((entry) => entry.mode.kind === 'parallel'),
      parallelGroups,
      exclusive: ids((entry) => entry.mode.kind === 'exclusive'),
      succeeded: ids((entry) => !entry.result.isError),
      asked: ids((entry) => asked.has(entry.call.callId)),
      denied: ids((entry) => codeOf(entry.result) === 'TOOL_DENIED'),
      timedOut: ids((entry) => codeOf(entry.result) === 'TOOL_TIMEOUT'),
      failed: ids(
        (entry) => entry.result.isError && !['TOOL_DENIED', 'TOOL_TIMEOUT'].includes(codeOf(entry.result) ?? ''),
      ),
    }

    const row = (label: string, items: readonly string[], note = '') =>
      print(
        `  ${label.padEnd(17)}${items.length ? items.join(', ') : paint('2', 'none')}${note ? ` ${paint('2', note)}` : ''}`,
      )
    print()
    print(paint('1', 'summary'))
    print(
      `  ${'ran in parallel'.padEnd(17)}${parallelGroups.map((group) => group.join(', ')).join(' | ') || paint('2', 'none')}`,
    )
    print(
      `  ${''.padEnd(17)}${paint('2', `${parallelGroups.length} pooled group(s), up to ${maxInFlight} calls at once (pool of 4)`)}`,
    )
    row('ran exclusively', summary.exclusive, '(each alone, as an ordering barrier)')
    row('succeeded', summary.succeeded)
    row(
      'asked',
      summary.asked.map((id) => `${id} → ${approvals.get(id.split(' ')[0])}`),
      '(the approval service was consulted)',
    )
    row('denied', summary.denied)
    row('timed out', summary.timedOut)
    row('failed', summary.failed)
    print(
      `  ${'turn concludes'.padEnd(17)}${batch.concludesTurn ? 'yes' : 'no — the loop would send these results back to the model'}`,
    )
    print()
    print(`  ${'journal'.padEnd(17)}${journal}`)
    print(`  ${'open it'.padEnd(17)}npx tsx src/cli/bin.ts view ${journal}`)
    print(
      `  ${''.padEnd(17)}${paint('2', '(after npm run build: npx toolgate view <journal>; add --out FILE.html for one static file)')}`,
    )
    return summary
  } finally {
    for (const fiber of fibers.reverse()) await fiber.dispose()
    await rm(workspace, { recursive: true, force: true })
  }
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (invokedDirectly) {
  // Exit naturally (nothing is left open) so piped output is fully flushed.
  runDemo().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
