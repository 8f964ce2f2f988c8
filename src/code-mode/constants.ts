/** The reserved Code Mode transport tool: never registered, shadowed, restricted or removed. */
export const RUN_CODE_NAME = 'run_code'

/** The binding that searches the tools the SDK does not declare: `tools.$search(query)`. */
export const SEARCH_BINDING = '$search'

/** Past this many deferred tools the SDK names none of them, only how many there are. */
export const DEFERRED_INDEX_MAX = 100

/** The file name a program's messages report (esbuild's and QuickJS's). */
export const PROGRAM_FILE = 'run_code.ts'

/** The last log line of a run that logged past its caps. */
export function droppedLogLines(count: number): string {
  return `… ${count} more log line(s) dropped`
}
