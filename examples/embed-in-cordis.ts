/**
 * Recipe: toolgate inside a Cordis app (docs/guide/recipes/embed-in-cordis.md). The runtime is a
 * Cordis service named `tools`; features are plugins that declare they need it, register tools
 * and listeners through their own context, and take all of it back when they are unloaded.
 *
 *   npx tsx examples/embed-in-cordis.ts
 */
import { Context } from 'cordis'
import { CallbackApproval, createAgent, defineTool, TimeoutPolicy, ToolRuntime } from 'toolgate'

// #region plugin
/** A feature plugin: its tools and policies live exactly as long as it is loaded. */
class ClockTools {
  // Cordis starts the plugin once the `tools` service is there (and stops it if it goes away).
  static readonly inject = ['tools']

  constructor(ctx: Context) {
    ctx.tools.register(
      defineTool({
        name: 'now',
        description: 'The current time as an ISO 8601 string.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_args, iso) => [{ type: 'text', text: iso }] },
        execute: async () => new Date(0).toISOString(),
      }),
    )
    // A policy is a listener on the pipeline's events. ctx.on returns a function that removes it, but
    // there is nothing to call by hand: a listener added through a plugin's ctx goes when the plugin does.
    ctx.on('tools/result', (exec, result) => console.log(`  [audit] ${exec.name}: ${result.isError ? 'failed' : 'ok'}`))
  }
}
// #endregion plugin

// #region app
const app = new Context()
await app.plugin(ToolRuntime) // the `tools` service (also the package's default export)
await app.plugin(TimeoutPolicy, { defaultTimeoutMs: 30_000 })
await app.plugin(CallbackApproval, { decide: () => ({ kind: 'allowed-once' }) }) // the `approval` service
const fiber = await app.plugin(ClockTools)

const agent = createAgent(app, { id: 'main' })
const call = () =>
  app.tools.execute({ callId: 'c1', name: 'now', arguments: {}, agent, signal: AbortSignal.timeout(60_000) })
console.log(`visible: ${app.tools.schemas(agent).map((schema) => schema.name)}`)
console.log(`now -> ${JSON.stringify((await call()).value)}`)

await fiber.dispose() // unloading the plugin removes its tool and its listener
console.log(`visible after unload: [${app.tools.schemas(agent).map((schema) => schema.name)}]`)
console.log(`now -> ${(await call()).error?.info?.code}`)
await app.fiber.dispose()
// #endregion app
