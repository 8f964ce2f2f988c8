// The signed-in person's own upstream credentials: a plain form page (no script) where they set or
// delete their own secret for each server whose config entry says "auth": { "perUser": ... }. The
// subject is always the session's, never one the form names; every post carries the session's
// CSRF token; a secret is never shown, echoed or logged.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { sameToken, type ViewerIdentity } from './access.js'

/** Where the viewer keeps a person's own secrets (the gateway's credential vault). */
export interface ViewerCredentials {
  /** The servers a person may keep their own secret for (those with `auth.perUser`). */
  readonly servers: readonly string[]
  /** Which servers `subject` has a secret stored for, and when it was set (ISO 8601). */
  stored(subject: string): Promise<ReadonlyMap<string, string>>
  set(server: string, subject: string, secret: string): Promise<void>
  /** Whether there was one to delete. */
  delete(server: string, subject: string): Promise<boolean>
}

/** Most bytes of a posted form (a personal token, its server and the CSRF token). */
const MAX_FORM_BYTES = 16 * 1024

/** CSP of the credentials page: no script at all, forms post only to this origin. */
export const CREDENTIALS_PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const esc = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function page(
  credentials: ViewerCredentials,
  identity: ViewerIdentity,
  csrf: string,
  stored: ReadonlyMap<string, string>,
  note?: { text: string; problem: boolean },
): string {
  const rows = credentials.servers.map((server) => {
    const since = stored.get(server)
    const state = since === undefined ? 'none stored' : `stored (set ${esc(since)})`
    return (
      `<section data-server="${esc(server)}"><h2>${esc(server)}</h2><p class="state">${state}</p>` +
      '<form method="post" action="/credentials">' +
      `<input type="hidden" name="csrf" value="${esc(csrf)}"><input type="hidden" name="server" value="${esc(server)}">` +
      `<label>Your secret <input name="value" type="password" autocomplete="off" required></label> ` +
      '<button type="submit" name="action" value="set">Save</button></form>' +
      (since === undefined
        ? ''
        : '<form method="post" action="/credentials">' +
          `<input type="hidden" name="csrf" value="${esc(csrf)}"><input type="hidden" name="server" value="${esc(server)}">` +
          '<button type="submit" name="action" value="delete">Delete</button></form>') +
      '</section>'
    )
  })
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Your upstream credentials</title></head>' +
    `<body><main><h1>Your upstream credentials</h1><p>Signed in as <b id="subject">${esc(identity.subject)}</b>. ` +
    'What you save here is sent, in your calls only, to the server it is saved for. It is never shown again.</p>' +
    (note === undefined
      ? ''
      : `<p id="${note.problem ? 'credentials-error' : 'credentials-done'}" role="${note.problem ? 'alert' : 'status'}">${esc(note.text)}</p>`) +
    (rows.length === 0 ? '<p>No server takes a personal credential.</p>' : rows.join('')) +
    '</main></body></html>'
  )
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  let size = 0
  const chunks: Buffer[] = []
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_FORM_BYTES) return undefined
    chunks.push(chunk as Buffer)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

/**
 * `GET /credentials` shows the signed-in person's servers; `POST /credentials` (a form with the
 * session's CSRF token, `server`, `action` set or delete, and `value`) changes their own entry.
 */
export async function handleCredentials(
  req: IncomingMessage,
  res: ServerResponse,
  credentials: ViewerCredentials,
  session: { identity: ViewerIdentity; csrf: string },
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  const { identity, csrf } = session
  const reply = async (status: number, note?: { text: string; problem: boolean }) => {
    const body = page(credentials, identity, csrf, await credentials.stored(identity.subject), note)
    res.writeHead(status, {
      ...headers,
      'content-security-policy': CREDENTIALS_PAGE_CSP,
      // With no-referrer, a browser posts the form with `Origin: null`, which the origin check refuses.
      'referrer-policy': 'same-origin',
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    })
    res.end(body)
  }
  const plain = (status: number, text: string) => {
    res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8' })
    res.end(`${text}\n`)
  }
  if (req.method === 'GET' || req.method === 'HEAD') return reply(200)
  if (req.method !== 'POST') {
    res.setHeader('allow', 'GET, HEAD, POST')
    return plain(405, 'method not allowed')
  }
  const form = await readForm(req)
  if (form === undefined) return plain(413, `the form is larger than ${MAX_FORM_BYTES} bytes`)
  if (!sameToken(form.get('csrf'), csrf)) return plain(403, 'forbidden: missing or wrong CSRF token')
  const server = form.get('server') ?? ''
  // Only a server whose credential is per person; the subject is the session's, whatever was posted.
  if (!credentials.servers.includes(server))
    return reply(400, { text: 'That server does not take a personal credential.', problem: true })
  const action = form.get('action')
  if (action === 'delete') {
    const removed = await credentials.delete(server, identity.subject)
    return reply(200, {
      text: removed ? `Deleted your credential for ${server}.` : 'There was none to delete.',
      problem: false,
    })
  }
  if (action !== 'set') return reply(400, { text: 'Expected the action "set" or "delete".', problem: true })
  const value = (form.get('value') ?? '').replace(/\r?\n$/, '')
  if (value === '') return reply(400, { text: 'The secret is empty.', problem: true })
  await credentials.set(server, identity.subject, value)
  return reply(200, { text: `Saved your credential for ${server}.`, problem: false })
}
