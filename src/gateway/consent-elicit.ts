// A call of a person who has not signed in to the upstream yet: a client that declared URL-mode
// elicitation (MCP 2025-11-25) is asked to open the sign-in link, and the call waits for the
// sign-in to complete, then goes on with the new credential; any other client gets an error that
// names the link to open before calling again, a link that only the answer to that client carries.
import type { McpCallChannel } from '../mcp/gateway.js'
import type { ConsentFlow } from './consent-flows.js'
import { UpstreamCredentialError } from './upstream-credential-error.js'

/** Wait for `flow` through the call's client; throws an UpstreamCredentialError when it cannot or does not complete. */
export async function signInThrough(
  server: string,
  flow: ConsentFlow,
  channel: McpCallChannel | undefined,
  signal: AbortSignal,
): Promise<void> {
  // The link binds whoever opens it first to this person: it goes to the call's client only, never
  // into the recorded result (the journal and the viewer see a placeholder in its place).
  const reveal = channel?.reveal?.bind(channel)
  if (channel === undefined || reveal === undefined) {
    flow.cancel()
    throw new UpstreamCredentialError(
      `servers.${server} needs you to sign in to it first, and this call's client cannot be given the sign-in link ` +
        'privately: call it from an MCP session (2025-11-25) over --http, or ask an operator to set your credential ' +
        'with `toolgate vault set`',
    )
  }
  const link = `[the sign-in link for servers.${server}, given to the calling client only]`
  reveal(link, flow.url)
  const client = channel.server
  if (client.getClientCapabilities()?.elicitation?.url === undefined)
    throw new UpstreamCredentialError(
      `servers.${server} needs you to sign in to it first: open ${link} in your browser ` +
        '(the link works once, for 10 minutes), then call again',
    )
  const message = `Sign in to ${server} so that toolgate can call it with your own account.`
  const timeout = Math.max(1000, flow.expiresAt - Date.now())
  let answer: { action: string }
  try {
    answer = await channel.send((options) =>
      client.elicitInput(
        { mode: 'url', message, url: flow.url, elicitationId: flow.elicitationId },
        { ...options, signal, timeout },
      ),
    )
  } catch {
    flow.cancel()
    throw new UpstreamCredentialError(
      `servers.${server} needs you to sign in to it first, and the client did not answer the request to open the ` +
        `link: open ${link} in your browser, then call again`,
    )
  }
  if (answer.action !== 'accept') {
    flow.cancel()
    throw new UpstreamCredentialError(
      `servers.${server} needs you to sign in to it first, and the sign-in was ${answer.action === 'decline' ? 'declined' : 'cancelled'}`,
    )
  }
  await untilDone(flow.done, signal)
  // The client learns the sign-in is over (the call's own answer follows).
  await channel
    .send((options) => client.createElicitationCompletionNotifier(flow.elicitationId, options)())
    .catch(() => {})
}

function untilDone(done: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<void>((resolve, reject) => {
    const stop = () => reject(signal.reason)
    signal.addEventListener('abort', stop, { once: true })
    done.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop))
  })
}
