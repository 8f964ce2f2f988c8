// A scripted agent session run through the real runtime and the real tools, journaled by the real
// Journal plugin: edit, read, grep, bash, an error, a denial, a run_code with sub-calls, an image,
// and untrusted text carrying injection strings.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createQuickJsRuntime } from '../../src/code-mode/index.js'
import {
  CallbackApproval,
  createAgent,
  createBashTool,
  createFsTools,
  createToolRuntime,
  defineTool,
  Journal,
  type ToolExecutionInput,
} from '../../src/index.js'

/** Strings that must render as text: markup, an event-handler attribute, a script URL, ANSI. */
export const INJECTIONS = [
  '<script>window.__pwned = 1; alert("script")</script>',
  '<img src=x onerror="window.__pwned = 2; alert(\'onerror\')">',
  'javascript:alert("url")',
  '\u001b[31mRED\u001b[0m',
] as const

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

export interface ScriptedSession {
  journal: string
  workspace: string
  /** Top-level calls, in order. */
  topLevel: string[]
  /** Sub-calls of the run_code call. */
  subCalls: string[]
  runCodeId: string
  editId: string
  /** Appends one more complete call (started + result) to the journal, as a live session would. */
  appendCall(callId: string): Promise<void>
}

/** Run the scripted session into `dir/session.jsonl`. */
export async function runScriptedSession(dir?: string): Promise<ScriptedSession> {
  const root = dir ?? (await mkdtemp(join(tmpdir(), 'toolgate-viewer-')))
  const workspace = join(root, 'ws')
  await mkdir(join(workspace, 'src'), { recursive: true })
  await writeFile(
    join(workspace, 'src', 'app.ts'),
    "export function greet(name: string): string {\n  return 'hello, ' + name\n}\n\nconsole.log(greet('world'))\n",
  )
  await writeFile(join(workspace, 'src', 'util.ts'), 'export const answer = 42\n// greet the user\n')
  await writeFile(join(workspace, 'README.md'), `# demo\n\n${INJECTIONS.join('\n')}\n`)
  const journal = join(root, 'session.jsonl')
  await writeFile(journal, '')

  const { ctx, tools } = await createToolRuntime({
    mode: 'both',
    codeMode: { runtime: createQuickJsRuntime({ cpuTimeMs: 2000 }) },
  })
  for (const def of createFsTools({ root: workspace })) tools.register(def)
  tools.register(createBashTool({ cwd: workspace }))
  tools.register(
    defineTool({
      name: 'screenshot',
      description: 'Capture the screen.',
      parameters: {},
      output: {
        schema: {
          type: 'object',
          properties: { bytes: { type: 'integer', required: true } },
          additionalProperties: false,
        },
        render: () => [
          { type: 'text', text: 'captured 1×1' },
          { type: 'image', mediaType: 'image/png', data: PNG },
        ],
      },
      execute: async () => ({ bytes: 68 }),
    }),
  )

  // The real Journal plugin writes the session's records; the approval service denies writes.
  await ctx.plugin(Journal, { path: journal })
  await ctx.plugin(CallbackApproval, {
    decide: () => ({ kind: 'denied', reason: 'writes are not allowed in this session' }),
  })

  const agent = createAgent(ctx, { id: 'agent-1' })
  const hostile = createAgent(ctx, { id: INJECTIONS[1] })
  agent.ctx.on('tools/pre-execute', (exec, next) =>
    exec.name === 'write_file' ? Promise.resolve({ kind: 'ask', reason: 'writes modify the workspace' }) : next(),
  )

  const signal = new AbortController().signal
  const run = (callId: string, name: string, args: unknown, who = agent) =>
    tools.execute({ callId, name, arguments: args, agent: who, signal } as ToolExecutionInput)

  const topLevel: string[] = []
  const call = async (callId: string, name: string, args: unknown, who = agent) => {
    topLevel.push(callId)
    return run(callId, name, args, who)
  }
  await call('c01-read', 'read_file', { path: 'src/app.ts' })
  await call('c02-edit', 'edit_file', {
    path: 'src/app.ts',
    old_string: "  return 'hello, ' + name",
    new_string: "  return 'hello, ' + name + '!'",
  })
  await call('c03-grep', 'grep', { pattern: 'greet' })
  await call('c04-bash', 'bash', { command: "echo building; echo 'warning: 1 issue' >&2; exit 3" })
  await call('c05-missing', 'read_file', { path: 'docs/missing.md' })
  await call('c06-write', 'write_file', { path: 'NOTES.md', content: 'notes\n' })
  await call('c07-code', 'run_code', {
    description: 'Read the app and find greetings',
    code: [
      "const file = await tools.read_file({ path: 'src/util.ts' })",
      "const hits = await tools.grep({ pattern: 'answer' })",
      'console.log(file.totalLines)',
      'return { lines: file.totalLines, hits: hits.total }',
    ].join('\n'),
  })
  await call('c08-hostile', 'read_file', { path: 'README.md' }, hostile)
  await call('c09-echo', 'bash', {
    command: `printf '%s\\n' ${INJECTIONS.map((s) => `'${s.replace(/'/g, "'\\''")}'`).join(' ')}`,
  })
  await call('c10-shot', 'screenshot', {})

  return {
    journal,
    workspace,
    topLevel,
    subCalls: ['c07-code:code:1', 'c07-code:code:2'],
    runCodeId: 'c07-code',
    editId: 'c02-edit',
    async appendCall(callId: string) {
      await run(callId, 'read_file', { path: 'src/util.ts' })
    },
  }
}
