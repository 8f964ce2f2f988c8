// One log line per tool call (`--verbose`, `--log-level debug`, or `--log-format json`): its id,
// tool, caller and outcome, never its arguments.

import { directListener } from '../runtime/index.js'
import type { Gateway } from './gateway.js'
import type { Log } from './log.js'

export function logCalls(gateway: Pick<Gateway, 'agent' | 'identities'>, log: Log): void {
  gateway.agent.ctx.on(
    'tools/result',
    directListener((exec, result) => {
      const outcome = result.isError ? `error: ${result.error.message.split('\n', 1)[0]}` : 'ok'
      const text = `${exec.callId} ${exec.name} → ${outcome}`
      // Text keeps today's debug line; JSON is meant for a collector, so the call is info there.
      if (log.format !== 'json') return log.debug(text)
      const subject = safely(() => gateway.identities.identityOf(exec.agent)?.subject)
      log.info(text, {
        callId: exec.callId,
        tool: exec.name,
        outcome: result.isError ? (result.error.info?.code === 'ABORTED' ? 'cancelled' : 'error') : 'ok',
        ...(subject === undefined ? {} : { subject }),
        ...(exec.traceId === undefined ? {} : { traceId: exec.traceId }),
      })
    }),
  )
}

function safely<T>(read: () => T): T | undefined {
  try {
    return read()
  } catch {
    return undefined
  }
}
