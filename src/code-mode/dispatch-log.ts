import { snapshotContent } from '../runtime/content-check.js'
import type { RegistryCore } from '../runtime/registry.js'
import { warnContained } from '../runtime/untrusted.js'
import { waterfall } from '../runtime/waterfall.js'
import type { CodeDispatchLog } from './events.js'

/**
 * The durable log of one settled `run_code` sub-dispatch (R-CODE-4): the `tools/code-dispatch-log`
 * waterfall may replace only the logged content; a throwing or malformed listener falls back to
 * the original. The record is then emitted as `tools/code-dispatch`. Never throws.
 */
export async function logCodeDispatch(core: RegistryCore, log: CodeDispatchLog): Promise<void> {
  const scope = core.scopeOfAgent(log.agent) ?? core.global
  let content = log.content
  if (core.hasHooks('tools/code-dispatch-log')) {
    try {
      const replaced: unknown = await waterfall(core.hooks, scope.dispatchThis, 'tools/code-dispatch-log', [log], () =>
        Promise.resolve(log.content),
      )
      content = snapshotContent(replaced, 'tools/code-dispatch-log result')
    } catch (error) {
      warnContained(core, 'a tools/code-dispatch-log listener failed; logging the original content', error)
      content = log.content
    }
  }
  if (!core.hasHooks('tools/code-dispatch')) return
  const record = Object.freeze({
    parentCallId: log.exec.callId,
    rootCallId: log.exec.rootCallId,
    subCallId: log.subCallId,
    name: log.name,
    isError: log.isError,
    content,
  })
  try {
    await core.events.parallel(scope.dispatchThis as never, 'tools/code-dispatch', record, log)
  } catch (error) {
    warnContained(core, 'a tools/code-dispatch listener failed', error)
  }
}
