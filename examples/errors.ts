/**
 * Errors and their codes (docs/guide/errors.md): a failed call is a result with a stable code;
 * the APIs that are not calls throw errors that extend ToolgateError.
 *
 *   npx tsx examples/errors.ts
 */
import { ConfigError, createToolRuntime, defineTool, ERROR_CODES, TimeoutPolicy, ToolgateError } from 'toolgate'

const { ctx, tools } = await createToolRuntime()
const add = defineTool({
  name: 'add',
  description: 'Add two integers.',
  parameters: { a: { type: 'integer', required: true }, b: { type: 'integer', required: true } },
  output: { schema: { type: 'integer' }, render: (_args, sum) => [{ type: 'text', text: String(sum) }] },
  execute: async ({ a, b }) => a + b,
})
tools.register(add)
const signal = AbortSignal.timeout(5_000)

// #region result
const result = await tools.execute({ callId: 'c1', name: 'add', arguments: { a: 'two', b: 2 }, signal })
if (result.isError && result.error.info?.code === 'INVALID_ARGS') {
  // The model sent bad arguments; it reads the path-qualified violations in result.content.
  console.log(`${result.error.info.code}: ${ERROR_CODES.INVALID_ARGS.meaning}`)
}
// #endregion result

// #region thrown
try {
  tools.register(add) // the name is taken
} catch (error) {
  if (error instanceof ToolgateError) console.log(`${error.code}: ${error.name}`)
}
// #endregion thrown

// #region config
try {
  await ctx.plugin(TimeoutPolicy, { defaultTimeoutMs: -1 })
} catch (error) {
  // A ToolgateError like every other: code INVALID_CONFIG, and the option to fix in `path`.
  if (error instanceof ConfigError) console.log(`${error.code} at ${error.path}: ${error.issues[0]}`)
}
// #endregion config
await ctx.fiber.dispose()
