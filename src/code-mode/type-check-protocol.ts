// What the program checker and its thread exchange, and how a program is wrapped to be checked:
// the same wrapping the runtimes give it (the body of an async function), so top-level `await` and
// `return` check as they run.

/** Virtual file names; a diagnostic's position is reported on the program's own lines instead. */
export const SDK_CHECK_FILE = '/toolgate/sdk.ts'
export const PROGRAM_CHECK_FILE = '/toolgate/program.ts'

/** At most this many diagnostics are reported; one more tells the caller some were left out. */
export const MAX_DIAGNOSTICS = 20

/**
 * The configuration a program is checked under (tsconfig's `compilerOptions` form), written down so
 * the model's SDK, the guide and the checker agree: TypeScript's own `strict` family, the ES2022
 * library and nothing else (no DOM, no Node: the sandbox has neither), no emit.
 */
export const CHECK_COMPILER_OPTIONS = Object.freeze({
  strict: true,
  target: 'es2022',
  lib: ['es2022'],
  types: [],
  noEmit: true,
  skipLibCheck: true,
  isolatedModules: false,
})

/** One diagnostic on the program's own lines (1-based); line 0 when it is outside them. */
export interface ProgramDiagnostic {
  readonly line: number
  readonly column: number
  /** TypeScript's error number (`TS2345`). */
  readonly code: number
  readonly message: string
}

export interface CheckRequest {
  readonly id: number
  readonly sdk: string
  readonly code: string
}

/** Load the compiler and run a few throwaway checks, so the first real check finds it warm. */
export interface WarmRequest {
  readonly warm: true
}

/** The thread finished warming (or stopped early for a real check). */
export interface WarmReply {
  readonly warmed: true
}

export type CheckReply =
  | { readonly id: number; readonly diagnostics: ProgramDiagnostic[]; readonly version: string }
  | { readonly id: number; readonly unavailable: string }
  | { readonly id: number; readonly failed: string }

/** The program as the body of an async function, as it runs; `headerLines` lines precede it. */
export function wrapForCheck(code: string): { text: string; headerLines: number; programLines: number } {
  return {
    text: `async function __toolgateProgram() {\n${code}\n}\n`,
    headerLines: 1,
    programLines: code.split(/\r\n|\r|\n/).length,
  }
}
