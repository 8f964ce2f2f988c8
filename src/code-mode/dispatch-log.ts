import { snapshotContent, type ToolHost } from '../runtime/index.js'
import type { CodeDispatchLog } from './events.js'

/**
 * The durable log of one settled `run_code` sub-dispatch: the `tools/code-dispatch-log`
 * waterfall may replace only the logged content; a throwing or malformed listener falls back to
 * the original. The record is then emitted as `tools/code-dispatch`. Never throws.
 */
export async function logCodeDispatch(host: ToolHost, log: CodeDispatchLog): Promise<void> {
  let content = log.content
  if (host.hasListeners('tools/code-dispatch-log')) {
    try {
      const replaced: unknown = await host.waterfall('tools/code-dispatch-log', log.agent, [log], () =>
        Promise.resolve(log.content),
      )
      content = snapshotContent(replaced, 'tools/code-dispatch-log result')
    } catch (error) {
      host.warn('a tools/code-dispatch-log listener failed; logging the original content', error)
      content = log.content
    }
  }
  if (!host.hasListeners('tools/code-dispatch')) return
  const record = Object.freeze({
    parentCallId: log.exec.callId,
    rootCallId: log.exec.rootCallId,
    subCallId: log.subCallId,
    name: log.name,
    isError: log.isError,
    content,
  })
  await host.emit('tools/code-dispatch', log.agent, [record, log])
}
