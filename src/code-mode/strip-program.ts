import { transform } from 'esbuild'
import { PROGRAM_FILE } from './constants.js'

const MAIN = '__main'
const HEADER = `async function ${MAIN}() { 'use strict';\n`

/** A program after type stripping: JavaScript that evaluates to the async main function, or a syntax error. */
export type StrippedProgram =
  | { readonly ok: true; readonly js: string }
  | { readonly ok: false; readonly message: string }

interface EsbuildMessage {
  readonly text: string
  readonly location?: { readonly line: number; readonly column: number; readonly lineText: string } | null
}

function esbuildMessages(error: unknown): readonly EsbuildMessage[] {
  if (typeof error === 'object' && error !== null && Array.isArray((error as { errors?: unknown }).errors)) {
    return (error as { errors: EsbuildMessage[] }).errors
  }
  return []
}

/**
 * Wrap the program as the body of an async function, then strip types (esbuild rejects top-level
 * return otherwise). Runs on the host thread for both runtimes: esbuild works in its own process,
 * so one service serves every worker.
 */
export async function stripProgram(code: string): Promise<StrippedProgram> {
  const userLines = code.split(/\r\n|\r|\n/).length
  try {
    const result = await transform(`${HEADER}${code}\n}`, {
      loader: 'ts',
      target: 'es2022',
      sourcefile: PROGRAM_FILE,
      logLevel: 'silent',
    })
    return { ok: true, js: `${result.code}\n${MAIN}\n` }
  } catch (error) {
    const messages = esbuildMessages(error)
    if (messages.length === 0) return { ok: false, message: `SyntaxError: ${String(error)}` }
    const lines = messages.slice(0, 5).map((message) => {
      const location = message.location
      if (!location) return `SyntaxError: ${message.text}`
      const line = location.line - 1
      if (line < 1 || line > userLines) return `SyntaxError at the end of the program: ${message.text}`
      return `SyntaxError at line ${line}, column ${location.column + 1}: ${message.text}\n    ${location.lineText}`
    })
    return { ok: false, message: lines.join('\n') }
  }
}
