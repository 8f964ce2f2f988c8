// The program checker's thread: the TypeScript compiler, loaded here and never on the caller's
// thread, with one warm language service per SDK text (an agent view's declarations), so a check
// after the first re-checks only the program's file.
import path from 'node:path'
import { parentPort } from 'node:worker_threads'
import type * as TS from 'typescript'
import {
  CHECK_COMPILER_OPTIONS,
  type CheckReply,
  type CheckRequest,
  MAX_DIAGNOSTICS,
  PROGRAM_CHECK_FILE,
  type ProgramDiagnostic,
  SDK_CHECK_FILE,
  type WarmReply,
  type WarmRequest,
  wrapForCheck,
} from './type-check-protocol.js'

type Ts = typeof TS

/** Language services by SDK text, least recently used first; a few views at once stay warm. */
const MAX_VIEWS = 8

interface View {
  readonly service: TS.LanguageService
  /** Its own file names: the document registry (shared for the library files) keys by name and version. */
  readonly sdkFile: string
  readonly programFile: string
  program: string
  version: number
}

let viewsMade = 0

let ts: Ts | undefined
let unavailable: string | undefined
let registry: TS.DocumentRegistry | undefined
let options: TS.CompilerOptions | undefined
const views = new Map<string, View>()
const libTexts = new Map<string, TS.IScriptSnapshot | undefined>()

async function load(): Promise<Ts | undefined> {
  if (ts !== undefined || unavailable !== undefined) return ts
  try {
    const imported = (await import('typescript')) as Ts & { default?: Ts }
    ts = imported.default ?? imported
    registry = ts.createDocumentRegistry()
    const converted = ts.convertCompilerOptionsFromJson(CHECK_COMPILER_OPTIONS, '/')
    options = converted.options
  } catch (error) {
    unavailable = error instanceof Error ? error.message : String(error)
  }
  return ts
}

function viewOf(api: Ts, sdk: string): View {
  const known = views.get(sdk)
  if (known !== undefined) {
    views.delete(sdk)
    views.set(sdk, known)
    return known
  }
  const libDir = path.dirname(api.getDefaultLibFilePath(options ?? {}))
  const n = ++viewsMade
  const sdkFile = SDK_CHECK_FILE.replace(/\.ts$/, `-${n}.ts`)
  const programFile = PROGRAM_CHECK_FILE.replace(/\.ts$/, `-${n}.ts`)
  const view: View = {
    sdkFile,
    programFile,
    program: '',
    version: 0,
    service: undefined as unknown as TS.LanguageService,
  }
  const sdkSnapshot = api.ScriptSnapshot.fromString(sdk)
  const host: TS.LanguageServiceHost = {
    getCompilationSettings: () => options ?? {},
    getScriptFileNames: () => [sdkFile, programFile],
    getScriptVersion: (file) => (file === programFile ? String(view.version) : '0'),
    getScriptSnapshot: (file) => {
      if (file === programFile) return api.ScriptSnapshot.fromString(view.program)
      if (file === sdkFile) return sdkSnapshot
      if (!libTexts.has(file)) {
        const text = api.sys.readFile(file)
        libTexts.set(file, text === undefined ? undefined : api.ScriptSnapshot.fromString(text))
      }
      return libTexts.get(file)
    },
    getCurrentDirectory: () => '/',
    getDefaultLibFileName: (o) => api.getDefaultLibFilePath(o),
    fileExists: (file) => file === programFile || file === sdkFile || api.sys.fileExists(file),
    readFile: (file) => api.sys.readFile(file),
    readDirectory: () => [],
    directoryExists: (dir) => dir === '/' || dir.startsWith(libDir),
    getDirectories: () => [],
  }
  ;(view as { service: TS.LanguageService }).service = api.createLanguageService(host, registry)
  views.set(sdk, view)
  if (views.size > MAX_VIEWS) {
    const [oldest] = views.keys()
    if (oldest !== undefined) {
      views.get(oldest)?.service.dispose()
      views.delete(oldest)
    }
  }
  return view
}

function check(api: Ts, request: CheckRequest): ProgramDiagnostic[] {
  const view = viewOf(api, request.sdk)
  const wrapped = wrapForCheck(request.code)
  view.program = wrapped.text
  view.version++
  const diagnostics = [
    ...view.service.getSyntacticDiagnostics(view.programFile),
    ...view.service.getSemanticDiagnostics(view.programFile),
  ]
  const out: ProgramDiagnostic[] = []
  for (const diagnostic of diagnostics) {
    if (diagnostic.category !== api.DiagnosticCategory.Error) continue
    // One line per diagnostic: TypeScript's chain of reasons, joined.
    const message = api.flattenDiagnosticMessageText(diagnostic.messageText, ' ').replace(/\s+/g, ' ')
    if (diagnostic.file === undefined || diagnostic.start === undefined) {
      out.push({ line: 0, column: 0, code: diagnostic.code, message })
      continue
    }
    const at = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    // The wrapper's first line is not the program's: line 1 of the program is the file's line 2.
    const line = at.line + 1 - wrapped.headerLines
    const inProgram = line >= 1 && line <= wrapped.programLines
    out.push({ line: inProgram ? line : 0, column: inProgram ? at.character + 1 : 0, code: diagnostic.code, message })
  }
  out.sort((a, b) => a.line - b.line || a.column - b.column)
  return out.slice(0, MAX_DIAGNOSTICS + 1)
}

/** Throwaway checks run to warm the thread: enough for V8 to optimise the checker's hot paths. */
const WARM_ROUNDS = 12
const WARM_TOOLS = 24
let warming = false
let realChecks = 0

/** A small SDK in the generated shape, and a program that uses what programs use: calls, loops, `Promise.all`. */
function warmInputs(round: number): { sdk: string; code: string } {
  const args: string[] = []
  const outputs: string[] = []
  const bindings: string[] = []
  for (let i = 0; i < WARM_TOOLS; i++) {
    args.push(`  t${i}: {\n    path: string\n    limit?: number\n    mode?: ("a" | "b")\n  }`)
    outputs.push(`  t${i}: ({\n    lines: string[]\n    total: number\n  } & { [key: string]: unknown })`)
    bindings.push(`  t${i}(args: ToolArgsMap["t${i}"]): Promise<ToolOutputMap["t${i}"]>`)
  }
  const sdk = `interface ToolArgsMap {\n${args.join('\n')}\n}\ninterface ToolOutputMap {\n${outputs.join('\n')}\n}\ndeclare const tools: {\n${bindings.join('\n')}\n}\n`
  const lines = [`const seen: string[] = [] // ${round}`, 'let total = 0']
  for (let i = 0; i < WARM_TOOLS - 2; i++)
    lines.push(
      `const r${i} = await tools.t${i}({ path: '/${i}', mode: 'a' })`,
      `for (const line of r${i}.lines) if (line.length > ${i}) seen.push(line)`,
      `total += r${i}.total`,
    )
  lines.push(
    `const [a, b] = await Promise.all([tools.t${WARM_TOOLS - 2}({ path: '/a' }), tools.t${WARM_TOOLS - 1}({ path: 1 })])`,
    'return { total: total + a.total + b.total, seen: seen.slice(0, 3) }',
  )
  return { sdk, code: lines.join('\n') }
}

/** Parse the library files into the shared registry and warm the checker; a real check stops it. */
async function warm(api: Ts): Promise<void> {
  if (warming) return
  warming = true
  const before = realChecks
  for (let round = 0; round < WARM_ROUNDS && realChecks === before; round++) {
    const { sdk, code } = warmInputs(round)
    check(api, { id: 0, sdk, code })
    // Between rounds, a waiting real check runs first.
    await new Promise((resolve) => setImmediate(resolve))
  }
  const { sdk } = warmInputs(0)
  views.get(sdk)?.service.dispose()
  views.delete(sdk)
}

parentPort?.on('message', async (request: CheckRequest | WarmRequest) => {
  if ('warm' in request) {
    const api = await load()
    if (api !== undefined) await warm(api)
    parentPort?.postMessage({ warmed: true } satisfies WarmReply)
    return
  }
  realChecks++
  const api = await load()
  let reply: CheckReply
  if (api === undefined) reply = { id: request.id, unavailable: unavailable ?? 'typescript did not load' }
  else {
    try {
      reply = { id: request.id, diagnostics: check(api, request), version: api.version }
    } catch (error) {
      reply = { id: request.id, failed: error instanceof Error ? error.message : String(error) }
    }
  }
  parentPort?.postMessage(reply)
})
