// Tool search: a full-text index over what the registry holds, and the `search_tools` finder that
// loads deferred tools for the agent that found them. Installed through `tools.host`, like Code Mode.

export { EmbeddingRanker, type EncoderSource, type SentenceEncoder } from './embedding-ranker.js'
export {
  type MatchReason,
  type PrepareOptions,
  type RankedTool,
  splitWords,
  stem,
  type TextEngineOptions,
  TextSearchEngine,
  type ToolSearchEngine,
  type ToolSearchField,
} from './engine.js'
export { FusedSearchEngine, type RankerHooks, type ToolRanker, type ToolSearchDocument } from './ranker-engine.js'
export {
  DEFAULT_SEARCH_LIMIT,
  installToolSearch,
  MAX_SEARCH_LIMIT,
  SEARCH_TOOLS_NAME,
  type ToolSearch,
  type ToolSearchCallOptions,
  type ToolSearchMatch,
  type ToolSearchOptions,
} from './tool-search.js'
