// Small checks the SDK adapters share.

/** Validate an adapter's options (the SDK client and the model name). */
export function checkModelOptions<T extends { client: unknown; model: string }>(options: T, caller: string): T {
  if (options === null || typeof options !== 'object') throw new TypeError(`${caller}: options must be an object`)
  if (options.client === null || typeof options.client !== 'object')
    throw new TypeError(`${caller}: options.client must be the SDK client`)
  if (typeof options.model !== 'string' || options.model === '')
    throw new TypeError(`${caller}: options.model must be a non-empty string`)
  return options
}
