// Moved to src/contract/ (the tool contract, which imports nothing above it); kept so that
// existing imports resolve. New code imports from src/contract/.
export type * from '../contract/json-schema.js'
