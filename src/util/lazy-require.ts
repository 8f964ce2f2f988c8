import { createRequire } from 'node:module'

const requireHere = createRequire(import.meta.url)

/**
 * A dependency loaded on first use rather than when the package root is imported: `diff`,
 * `tinyglobby`, `picomatch` and `ignore` cost more cold-import time than the whole runtime core,
 * and most processes that import toolgate never render a diff or walk a directory. They are all
 * CommonJS-loadable, so the first use stays synchronous (no call site turns async).
 */
export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined
  return () => {
    loaded ??= requireHere(specifier) as T
    return loaded
  }
}
