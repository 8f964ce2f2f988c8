// Approving a waiting call the way a person does: in a viewer over the store, through its HTTP API
// (the token from the event stream's snapshot, then a decision).
import type { Store } from '../../src/store/index.js'
import { startViewer } from '../../src/viewer/server.js'
import { storeApproval } from '../../src/viewer/store-source.js'
import { type UntilOptions, until } from './until.js'

export interface ViewerApprovalOptions {
  /** The turn the call belongs to, when the decision names it. */
  readonly turnId?: string
  /** The test's cleanups: the viewer's close joins them. */
  readonly closers: (() => Promise<unknown>)[]
  /** How to wait for the viewer's token. */
  readonly wait?: UntilOptions
}

/** Approve `callId` in a viewer over `store`; resolves with the decision's response. */
export async function approveInViewer(store: Store, callId: string, options: ViewerApprovalOptions): Promise<Response> {
  const viewer = await startViewer({
    journal: 'store',
    title: 'store',
    store,
    approval: storeApproval(store),
    pollMs: 100,
  })
  options.closers.push(() => viewer.close())
  const token = await until(
    async () => {
      const controller = new AbortController()
      const response = await fetch(`${viewer.url}events`, { signal: controller.signal })
      const reader = response.body!.getReader()
      let text = ''
      while (!/event: snapshot\ndata: .*\n/.test(text)) {
        const { value, done } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      controller.abort()
      const head = /event: snapshot\ndata: (.*)\n/.exec(text)
      return head ? (JSON.parse(head[1]) as { token?: string }).token : undefined
    },
    'the viewer token',
    options.wait,
  )
  const { turnId } = options
  return fetch(`${viewer.url}decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-toolgate-token': token },
    body: JSON.stringify({ callId, decision: 'approve', ...(turnId === undefined ? {} : { turnId }) }),
  })
}
