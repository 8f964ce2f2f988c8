// One POST of a form to an OAuth token endpoint (RFC 6749 §3.2), shared by the consent flows and
// token exchange so both keep the same rules: only the configured endpoint, never redirected,
// bounded in time, and untrusted answer text shown printable and short.

const TIMEOUT_MS = 10_000

/** The text of an untrusted value for a message or a log line: printable, short, quoted. */
export function shown(value: unknown): string {
  return JSON.stringify(
    String(value)
      .replace(/[^\x20-\x7e]/g, '?')
      .slice(0, 200),
  )
}

/** Why a token request got no JSON answer: no answer in time, no connection, or a body that is not JSON. */
export type TokenPostFailure = 'timeout' | 'unreachable' | { readonly status: number }

/** A token endpoint's JSON answer: its HTTP status and the fields of its body (empty when not an object). */
export interface TokenEndpointAnswer {
  readonly status: number
  readonly ok: boolean
  readonly fields: Readonly<Record<string, unknown>>
}

/**
 * POST `form` to `endpoint`; with `basic`, the client authenticates by HTTP Basic (RFC 6749 §2.3.1),
 * otherwise the caller has put its client authentication in the form. `failed` words the error
 * thrown when no JSON answer came.
 */
export async function postTokenForm(
  endpoint: string,
  form: URLSearchParams,
  basic: { readonly clientId: string; readonly secret: string } | undefined,
  failed: (failure: TokenPostFailure) => Error,
): Promise<TokenEndpointAnswer> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  }
  if (basic !== undefined) {
    const pair = `${encodeURIComponent(basic.clientId)}:${encodeURIComponent(basic.secret)}`
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`
  }
  let res: Response
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers,
      body: form,
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    })
  } catch (error) {
    throw failed(error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'unreachable')
  }
  let body: unknown
  try {
    body = await res.json()
  } catch {
    throw failed({ status: res.status })
  }
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  return { status: res.status, ok: res.ok, fields }
}
