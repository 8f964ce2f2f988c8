// A PostgreSQL URL as messages and logs may show it: every secret it can carry is replaced by `***`.
// libpq takes any connection parameter in the query, so only parameters known to hold no secret
// keep their values; any other (password, sslpassword, sslkey, an unknown one) is masked.

/** Query parameters whose values are never secret: shown as given. */
const SAFE_PARAMS = new Set([
  'host',
  'hostaddr',
  'port',
  'dbname',
  'user',
  'application_name',
  'fallback_application_name',
  'connect_timeout',
  'client_encoding',
  'sslmode',
  'sslrootcert',
  'sslcompression',
  'sslnegotiation',
  'gssencmode',
  'target_session_attrs',
  'load_balance_hosts',
  'keepalives',
  'keepalives_idle',
  'keepalives_interval',
  'keepalives_count',
  'tcp_user_timeout',
  'replication',
  'ssl',
  'uselibpqcompat',
])

const MASK = '***'

/** `url` with its password, every query value that may be a secret and its fragment masked. */
export function redactStoreUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'postgres://…'
  }
  if (parsed.password !== '') parsed.password = MASK
  const params = [...parsed.searchParams]
  if (params.length > 0) {
    parsed.search = ''
    for (const [key, value] of params)
      parsed.searchParams.append(key, SAFE_PARAMS.has(key.toLowerCase()) ? value : MASK)
  }
  parsed.hash = ''
  return parsed.toString()
}

/** The secrets `url` carries (its password and every masked query value), to scrub from messages. */
export function storeUrlSecrets(url: string): string[] {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return [url]
  }
  const secrets: string[] = [url]
  if (parsed.password !== '') secrets.push(parsed.password, safeDecode(parsed.password))
  for (const [key, value] of parsed.searchParams)
    if (!SAFE_PARAMS.has(key.toLowerCase()) && value !== '') secrets.push(value)
  if (parsed.hash.length > 1) secrets.push(parsed.hash.slice(1))
  // Longest first, so that a secret containing another is masked whole.
  return [...new Set(secrets.filter((s) => s.length >= 3))].sort((a, b) => b.length - a.length)
}

/** `text` with every secret of `url` masked (a driver's message may quote the URL or a value of it). */
export function scrubStoreUrl(text: string, url: string): string {
  let out = text
  for (const secret of storeUrlSecrets(url)) out = out.split(secret).join(secret === url ? redactStoreUrl(url) : MASK)
  return out
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
