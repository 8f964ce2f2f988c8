// State that two bundles of the same process share: the executable's first script and the CLI's
// bundle each carry their own copy of a module, so a module-level value would be two values.

/** The process-wide value kept under `name` (on the global object), made by `create` the first time. */
export function processShared<T extends object>(name: string, create: () => T): T {
  const key = Symbol.for(`toolgate.${name}`)
  const holder = globalThis as Record<symbol, unknown>
  const kept = holder[key]
  if (typeof kept === 'object' && kept !== null) return kept as T
  const created = create()
  holder[key] = created
  return created
}
