/**
 * Concept: presentation (docs/guide/presentation.md). What the model reads (`content`) and what a
 * person is shown are different things: a tool can describe its call and its result as cards
 * (a diff, a read window, search matches, a terminal), and any UI can draw them.
 *
 *   npx tsx examples/presentation.ts
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFsTools, createToolRuntime } from 'toolgate'
import { genericCallView, genericResultView, renderToolCallLines, renderToolResultLines } from 'toolgate/presentation'

const root = await mkdtemp(join(tmpdir(), 'toolgate-presentation-'))
await writeFile(join(root, 'notes.txt'), 'bees make honey\nants make hills\n')
const { ctx, tools } = await createToolRuntime()
for (const tool of createFsTools({ root })) tools.register(tool)

// #region cards
const call = { name: 'edit_file', arguments: { path: 'notes.txt', old_string: 'hills', new_string: 'tunnels' } }
const definition = tools.get(call.name)
// Before it runs: the call card (tools without their own presenter get a generic one).
const callView = definition?.presentCall?.(call.arguments) ?? genericCallView(call.name, call.arguments)
console.log(renderToolCallLines(callView, { color: false }).join('\n'))

const result = await tools.execute({ callId: 'c1', ...call, signal: AbortSignal.timeout(60_000) })
// After: the result card. For edit_file it is a diff.
const resultView = definition?.presentResult?.(call.arguments, result) ?? genericResultView(result)
console.log(`card: ${resultView.card}`)
console.log(renderToolResultLines(resultView, { color: false }).join('\n'))
// #endregion cards

await ctx.fiber.dispose()
await rm(root, { recursive: true, force: true })
