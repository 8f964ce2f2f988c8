// Every error code with its meaning, and the base class of the errors toolgate throws. This folder
// imports nothing: every other layer may use it.
export { ERROR_CODES, type ErrorCode, type ErrorCodeInfo, type ErrorCodeSurface } from './codes.js'
export { ConfigError } from './config-error.js'
export { ToolgateError } from './toolgate-error.js'
