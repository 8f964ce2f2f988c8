// The `toolgate/presentation` subpath: the provider-neutral card vocabulary (R-VIEW), its helpers,
// and a terminal renderer.

export type {
  FileDiff,
  FileLocation,
  ReadFileLine,
  SearchFileMatches,
  ToolCallKind,
  ToolCallView,
  ToolResultView,
  WebSource,
} from '../contract/views.js'
export type { FileChange, FileDiffSummary } from './diff-card.js'
export { buildDiffResultView, DIFF_CONTEXT_LINES, DIFF_MAX_EDIT_LENGTH, diffCard, diffFile } from './diff-card.js'
export { genericCallView, genericResultView, sanitizeContent } from './generic.js'
export { languageFromPath } from './language.js'
export type { ReadWindow } from './read-window.js'
export { readWindow, splitLines } from './read-window.js'
export type { GroupedSearchMatches, GroupSearchOptions, SearchMatch } from './search-matches.js'
export { groupSearchMatches } from './search-matches.js'
export type { TerminalRenderOptions } from './terminal.js'
export { defaultTerminalColor, renderToolCallLines, renderToolResultLines } from './terminal.js'
