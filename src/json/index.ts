export type { JsonObject, JsonValue } from '../contract/json-value.js'
export { jsonDepthExceeds } from './depth.js'
export { JsonValueError } from './json-value-error.js'
export { appendIndex, appendKey } from './path.js'
export type { JsonIssue } from './snapshot.js'
export {
  cloneJsonValue,
  deepFreezeJsonValue,
  findJsonIssue,
  isFrozenSnapshot,
  isJsonValue,
  snapshotJsonValue,
} from './snapshot.js'
