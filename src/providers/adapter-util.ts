// Small checks the SDK adapters share.
import { ConfigError } from '../errors/config-error.js'

/** Validate an adapter's options (the SDK client and the model name). */
export function checkModelOptions<T extends { client: unknown; model: string }>(options: T, caller: string): T {
  if (options === null || typeof options !== 'object') throw new ConfigError(`${caller}(options)`, 'expected an object')
  if (options.client === null || typeof options.client !== 'object')
    throw new ConfigError(`${caller}(options).client`, 'expected the SDK client')
  if (typeof options.model !== 'string' || options.model === '')
    throw new ConfigError(`${caller}(options).model`, 'expected a non-empty string')
  return options
}
