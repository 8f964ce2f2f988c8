// Waiting, without a fixed sleep, for what another process or the database will make true.

export interface UntilOptions {
  /** How long to wait before failing (default 60 s: generous, for a machine running other suites). */
  readonly timeoutMs?: number
  /** How often to check (default 50 ms). */
  readonly everyMs?: number
  /** What to add to the timeout's message (what the gateways said, say). */
  readonly context?: () => string
}

/** The first value `check` gives that is not undefined; fails naming `what` after the timeout. */
export async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  options: UntilOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) {
      const context = options.context?.()
      throw new Error(`timed out waiting for ${what}${context === undefined ? '' : `; ${context}`}`)
    }
    await new Promise((done) => setTimeout(done, options.everyMs ?? 50))
  }
}
