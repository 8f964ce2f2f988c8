// Who may use the viewer: static bearer tokens (stored as SHA-256 hashes, the gateway's token
// shape) logged in once into an HttpOnly session cookie, a CSRF token per session for every
// state-changing request, and the identities allowed to decide approvals.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { isIP } from 'node:net'
import { ConfigError } from '../errors/config-error.js'
import { isRecord } from '../util/is-record.js'

/** A static token: the hex SHA-256 of the token's text, and who presents it. */
export interface ViewerToken {
  readonly sha256: string
  readonly subject: string
  readonly groups?: readonly string[]
}

/** Who may log in to the viewer, and who of them may decide approvals. */
export interface ViewerAccess {
  /** Login tokens; required when the viewer listens on anything but a loopback address. */
  readonly tokens?: readonly ViewerToken[]
  /** Who may approve or deny (by subject or group); with tokens and `--approve`, required. */
  readonly approvers?: { readonly subjects?: readonly string[]; readonly groups?: readonly string[] }
}

/** A logged-in person. */
export interface ViewerIdentity {
  readonly subject: string
  readonly groups: readonly string[]
}

/** The session cookie's name. */
export const VIEWER_SESSION_COOKIE = 'toolgate_viewer'
/** Sessions kept at once; the oldest is dropped past this. */
const MAX_SESSIONS = 1000
/** A session unused this long is gone. */
const SESSION_IDLE_MS = 12 * 60 * 60_000

/** Whether `host` (an address or a name) is a loopback interface. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === 'localhost') return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}

/** Check a `ViewerAccess` from untrusted JSON; every problem with its path in one error. */
export function checkViewerAccess(value: unknown, at: string): ViewerAccess {
  const issues: string[] = []
  if (!isRecord(value)) throw new ConfigError(at, 'expected an object { tokens?, approvers? }')
  for (const key of Object.keys(value))
    if (key !== 'tokens' && key !== 'approvers') issues.push(`${key}: unknown key (expected "tokens", "approvers")`)
  const tokens: ViewerToken[] = []
  if (value.tokens !== undefined) {
    if (!Array.isArray(value.tokens)) issues.push('tokens: expected an array of { sha256, subject, groups? }')
    else
      value.tokens.forEach((item: unknown, i) => {
        const p = `tokens[${i}]`
        if (!isRecord(item)) {
          issues.push(`${p}: expected an object { sha256, subject, groups? }`)
          return
        }
        for (const key of Object.keys(item))
          if (!['sha256', 'subject', 'groups'].includes(key))
            issues.push(`${p}.${key}: unknown key (expected "sha256", "subject", "groups")`)
        if (typeof item.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(item.sha256))
          issues.push(`${p}.sha256: expected the token's SHA-256 as 64 hex digits`)
        if (typeof item.subject !== 'string' || item.subject === '')
          issues.push(`${p}.subject: expected a non-empty string`)
        const groups = item.groups ?? []
        if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string' && g !== ''))
          issues.push(`${p}.groups: expected an array of non-empty strings`)
        tokens.push({
          sha256: String(item.sha256).toLowerCase(),
          subject: String(item.subject),
          groups: Array.isArray(groups) ? groups.map(String) : [],
        })
      })
  }
  let approvers: ViewerAccess['approvers']
  if (value.approvers !== undefined) {
    const a = value.approvers
    if (!isRecord(a)) issues.push('approvers: expected an object { subjects?, groups? }')
    else {
      for (const key of Object.keys(a))
        if (key !== 'subjects' && key !== 'groups')
          issues.push(`approvers.${key}: unknown key (expected "subjects", "groups")`)
      for (const key of ['subjects', 'groups'] as const)
        if (a[key] !== undefined && (!Array.isArray(a[key]) || !a[key].every((s) => typeof s === 'string' && s !== '')))
          issues.push(`approvers.${key}: expected an array of non-empty strings`)
      approvers = {
        ...(Array.isArray(a.subjects) ? { subjects: a.subjects.map(String) } : {}),
        ...(Array.isArray(a.groups) ? { groups: a.groups.map(String) } : {}),
      }
    }
  }
  if (issues.length) throw new ConfigError(at, issues)
  return { ...(value.tokens !== undefined ? { tokens } : {}), ...(approvers ? { approvers } : {}) }
}

interface Session {
  readonly identity: ViewerIdentity
  readonly csrf: string
  lastUsed: number
}

/** The viewer's logins and sessions. `enabled` is false when no tokens are configured. */
export class ViewerLogin {
  readonly enabled: boolean
  private readonly hashes: { hash: Buffer; identity: ViewerIdentity }[]
  private readonly sessions = new Map<string, Session>()
  private readonly approverSubjects: ReadonlySet<string>
  private readonly approverGroups: ReadonlySet<string>
  private readonly anyoneApproves: boolean

  constructor(access: ViewerAccess | undefined) {
    const tokens = access?.tokens ?? []
    this.enabled = tokens.length > 0
    this.hashes = tokens.map((t) => ({
      hash: Buffer.from(t.sha256.toLowerCase(), 'hex'),
      identity: Object.freeze({ subject: t.subject, groups: Object.freeze([...(t.groups ?? [])]) }),
    }))
    this.approverSubjects = new Set(access?.approvers?.subjects ?? [])
    this.approverGroups = new Set(access?.approvers?.groups ?? [])
    // Without login there is no one to tell apart: whoever reaches the loopback page decides.
    this.anyoneApproves = !this.enabled
  }

  /** A new session for the holder of `token`, or undefined when no configured token matches. */
  login(token: string): { id: string; identity: ViewerIdentity } | undefined {
    const hash = createHash('sha256').update(token, 'utf8').digest()
    // Every entry is compared, in constant time each, so the time taken does not say which matched.
    let found: ViewerIdentity | undefined
    for (const entry of this.hashes) if (timingSafeEqual(entry.hash, hash)) found ??= entry.identity
    if (found === undefined) return undefined
    const id = randomBytes(32).toString('base64url')
    this.sweep()
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string)
    this.sessions.set(id, { identity: found, csrf: randomBytes(24).toString('base64url'), lastUsed: Date.now() })
    return { id, identity: found }
  }

  /** The session the request's cookie names, if it is live. */
  sessionOf(headers: IncomingHttpHeaders): { identity: ViewerIdentity; csrf: string } | undefined {
    const id = cookie(headers.cookie, VIEWER_SESSION_COOKIE)
    if (id === undefined) return undefined
    const session = this.sessions.get(id)
    if (session === undefined) return undefined
    if (Date.now() - session.lastUsed > SESSION_IDLE_MS) {
      this.sessions.delete(id)
      return undefined
    }
    session.lastUsed = Date.now()
    return session
  }

  /** Whether `identity` (undefined: no login configured) may decide approvals. */
  mayApprove(identity: ViewerIdentity | undefined): boolean {
    if (identity === undefined) return this.anyoneApproves
    return this.approverSubjects.has(identity.subject) || identity.groups.some((g) => this.approverGroups.has(g))
  }

  private sweep(): void {
    const now = Date.now()
    for (const [id, session] of this.sessions) if (now - session.lastUsed > SESSION_IDLE_MS) this.sessions.delete(id)
  }
}

/** Whether two CSRF tokens are equal, in constant time. */
export function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

function cookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** The login page: a plain form (no script), posted to this origin only. */
export function loginPageHtml(title: string, problem?: string): string {
  const esc = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>' +
    `${esc(title)} · sign in</title></head><body><main><h1>Sign in to the toolgate viewer</h1>` +
    (problem === undefined ? '' : `<p id="login-error" role="alert">${esc(problem)}</p>`) +
    '<form method="post" action="/login"><label>Token <input id="token" name="token" type="password" ' +
    'autocomplete="current-password" required></label> <button type="submit">Sign in</button></form></main></body></html>'
  )
}

/** CSP of the login page: no script at all, the form posts only to this origin. */
export const LOGIN_PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
