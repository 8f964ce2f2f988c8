// The per-caller credential vault: each person's own secret for an upstream, encrypted at rest
// with AES-256-GCM, the subject and the server bound in as associated data (a secret copied to
// another person's or another server's entry fails its authentication tag, as does any edit of
// the file). Kept in a JSON file next to the config, written whole and renamed into place.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { ConfigError } from '../errors/config-error.js'
import { isRecord } from '../util/is-record.js'
import { UpstreamCredentialError } from './upstream-credential-error.js'

/** What `vault list` shows of an entry: never the secret. */
export interface VaultEntryInfo {
  readonly server: string
  readonly subject: string
  /** ISO 8601. */
  readonly updatedAt: string
}

/** An entry as it is kept (in the file or the store): the secret sealed, its tag and nonce in base64. */
export interface SealedVaultEntry extends VaultEntryInfo {
  readonly iv: string
  readonly tag: string
  readonly data: string
}
type Sealed = SealedVaultEntry

const FORMAT = 'toolgate-vault-1'

/** Read the vault key: 32 bytes, given raw, as 64 hex digits or in base64. */
export function readVaultKey(file: string): Buffer {
  let raw: Buffer
  try {
    raw = readFileSync(file)
  } catch (error) {
    throw new ConfigError(
      '--vault-key-file',
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    )
  }
  if (raw.length === 32) return raw
  const text = raw.toString('utf8').trim()
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex')
  const decoded = Buffer.from(text, 'base64')
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) && decoded.length === 32) return decoded
  throw new ConfigError('--vault-key-file', `${file}: expected a 32-byte key (raw, 64 hex digits or base64)`)
}

/** The associated data of an entry: who and which server it is for. */
function aad(server: string, subject: string): Buffer {
  return Buffer.from(JSON.stringify([FORMAT, server, subject]))
}

/** Seal `secret` for `subject` on `server` under `key` (a fresh nonce each time). */
export function sealVaultEntry(key: Buffer, server: string, subject: string, secret: string): SealedVaultEntry {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(aad(server, subject))
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return {
    server,
    subject,
    updatedAt: new Date().toISOString(),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  }
}

/**
 * The secret of a sealed entry, checked against who and which server it was sealed for; throws an
 * UpstreamCredentialError (never quoting the entry) when its tag fails. `where` says what was edited.
 */
export function openVaultEntry(key: Buffer, entry: SealedVaultEntry, where = 'the vault file'): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(entry.iv, 'base64'))
    decipher.setAAD(aad(entry.server, entry.subject))
    decipher.setAuthTag(Buffer.from(entry.tag, 'base64'))
    return Buffer.concat([decipher.update(Buffer.from(entry.data, 'base64')), decipher.final()]).toString('utf8')
  } catch {
    throw new UpstreamCredentialError(
      `servers.${entry.server}: the vault entry of ${JSON.stringify(entry.subject)} fails its authentication check ` +
        `(${where} was changed, or the key is not the one it was written with); set it again with \`toolgate vault set\``,
    )
  }
}

export class CredentialVault {
  private loaded: { mtimeMs: number; size: number; entries: Sealed[] } | undefined

  constructor(
    private readonly file: string,
    private readonly key: Buffer,
  ) {
    if (key.length !== 32) throw new ConfigError('--vault-key-file', 'expected a 32-byte key')
  }

  /** The secret of `subject` for `server`, or undefined when none is stored; throws when the entry fails its tag. */
  get(server: string, subject: string): string | undefined {
    const entry = this.entries().find((e) => e.server === server && e.subject === subject)
    if (entry === undefined) return undefined
    return openVaultEntry(this.key, entry)
  }

  set(server: string, subject: string, secret: string): void {
    const entry = sealVaultEntry(this.key, server, subject, secret)
    this.write([...this.entries().filter((e) => !(e.server === server && e.subject === subject)), entry])
  }

  /** Remove an entry; whether there was one. */
  delete(server: string, subject: string): boolean {
    const entries = this.entries()
    const kept = entries.filter((e) => !(e.server === server && e.subject === subject))
    if (kept.length === entries.length) return false
    this.write(kept)
    return true
  }

  list(): VaultEntryInfo[] {
    return this.entries().map(({ server, subject, updatedAt }) => ({ server, subject, updatedAt }))
  }

  /** The file's entries, read again when it changed on disk. */
  private entries(): Sealed[] {
    let stat: { mtimeMs: number; size: number }
    try {
      stat = statSync(this.file)
    } catch {
      return []
    }
    if (this.loaded?.mtimeMs === stat.mtimeMs && this.loaded.size === stat.size) return this.loaded.entries
    let value: unknown
    try {
      value = JSON.parse(readFileSync(this.file, 'utf8'))
    } catch {
      throw new ConfigError(this.file, 'the vault file is not valid JSON')
    }
    if (!isRecord(value) || value.format !== FORMAT || !Array.isArray(value.entries))
      throw new ConfigError(this.file, `expected a vault file ({ "format": "${FORMAT}", "entries": [...] })`)
    const entries = value.entries.filter(
      (e): e is Sealed =>
        isRecord(e) && ['server', 'subject', 'updatedAt', 'iv', 'tag', 'data'].every((k) => typeof e[k] === 'string'),
    )
    this.loaded = { mtimeMs: stat.mtimeMs, size: stat.size, entries }
    return entries
  }

  private write(entries: Sealed[]): void {
    const temp = `${this.file}.${process.pid}.tmp`
    writeFileSync(temp, `${JSON.stringify({ format: FORMAT, entries }, null, 2)}\n`, { mode: 0o600 })
    renameSync(temp, this.file)
    this.loaded = undefined
  }
}
