import type { ContentBlock } from './content.js'
import type { JsonValue } from './json-value.js'

/** Icon hint for a generic card. */
export type ToolCallKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'fetch' | 'other'

/** A file a call reads or modifies, for an editor to follow. */
export interface FileLocation {
  path: string
  /** 1-based line. */
  line?: number
}

/** One file change; `oldText: null` for a new file. */
export interface FileDiff {
  path: string
  oldText: string | null
  newText: string
}

/** One 1-based numbered line of a read window. */
export interface ReadFileLine {
  number: number
  text: string
}

/** Pending-state card (R-VIEW). */
export type ToolCallView =
  | {
      card: 'generic'
      title: string
      kind?: ToolCallKind
      rawInput?: JsonValue
      content?: ContentBlock[]
      locations?: FileLocation[]
    }
  | { card: 'terminal'; title: string; description?: string; cwd?: string }
  | { card: 'diff'; title: string; diffs: FileDiff[]; locations?: FileLocation[] }

/** One file's matches in a `search` card of shape `matches`. */
export interface SearchFileMatches {
  path: string
  matches: Array<{ line: number; text: string }>
}

/** One source of a `web` search card. */
export interface WebSource {
  title?: string
  url: string
  snippet?: string
}

/** Completed-state card (R-VIEW). A completed view replaces the pending one. */
export type ToolResultView =
  | { card: 'generic'; title?: string; content?: ContentBlock[] }
  | {
      card: 'terminal'
      title?: string
      output?: string
      exitCode?: number
      signal?: string
      /** What confined the command (bash: `'bwrap'` for bubblewrap, `'none'` for unconfined). */
      sandbox?: string
    }
  | { card: 'diff'; title?: string; diffs: FileDiff[] }
  | {
      card: 'search'
      shape: 'matches'
      title?: string
      /** Whether the inline result was capped. */
      truncated: boolean
      /** Total matches found, including ones not shown. */
      total: number
      files: SearchFileMatches[]
    }
  | {
      card: 'search'
      shape: 'paths'
      title?: string
      truncated: boolean
      total: number
      paths: string[]
    }
  | {
      card: 'read'
      title?: string
      path: string
      /** 1-based first line the window asked for, kept even when `lines` is empty. */
      offset: number
      lines: ReadFileLine[]
      totalLines: number
      lang?: string
      content?: string
    }
  | { card: 'web'; kind: 'search'; title?: string; sources: WebSource[]; answer?: string; truncated: boolean }
  | { card: 'web'; kind: 'fetch'; title?: string; url: string; statusCode: number; truncated: boolean }
