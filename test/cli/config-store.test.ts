// The config's `store` key (issue 26): a URL or { url, retentionDays?, poolSize?, synchronousCommit?,
// programLeaseMs? (issue 40, item 2) }, every problem reported with its path.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/gateway/config.js'
import { storeFlag } from '../../src/gateway/config-store.js'
import { SERVE_FLAGS } from '../../src/gateway/serve-spawn.js'
import { readSettings } from '../../src/gateway/settings.js'

describe('config: store (issue 26)', () => {
  it('accepts a postgres URL or the object form', () => {
    expect(parseConfig('{"store":"postgres://u@h/db"}', 'c.json').store).toEqual({ url: 'postgres://u@h/db' })
    expect(
      parseConfig('{"store":{"url":"postgresql://u@h/db","retentionDays":7,"poolSize":4}}', 'c.json').store,
    ).toEqual({ url: 'postgresql://u@h/db', retentionDays: 7, poolSize: 4 })
    expect(parseConfig('{"store":{"url":"postgres://u@h/db","synchronousCommit":false}}', 'c.json').store).toEqual({
      url: 'postgres://u@h/db',
      synchronousCommit: false,
    })
    expect(parseConfig('{"store":{"url":"postgres://u@h/db","programLeaseMs":4000}}', 'c.json').store).toEqual({
      url: 'postgres://u@h/db',
      programLeaseMs: 4000,
    })
  })

  it('refuses anything else, naming each path', () => {
    expect(() => parseConfig('{"store":"mysql://h/db"}', 'c.json')).toThrow(/store: expected a postgres:\/\/ URL/)
    let message = ''
    try {
      parseConfig(
        '{"store":{"url":5,"retentionDays":-1,"poolSize":1.5,"synchronousCommit":"off","programLeaseMs":99,"extra":true}}',
        'c.json',
      )
    } catch (error) {
      message = String(error)
    }
    expect(message).toMatch(/store\.extra: unknown key/)
    expect(message).toMatch(/store\.url: expected a postgres:\/\/ URL/)
    expect(message).toMatch(/store\.retentionDays: expected a positive number of days/)
    expect(message).toMatch(/store\.poolSize: expected a positive integer/)
    expect(message).toMatch(/store\.synchronousCommit: expected true or false/)
    expect(message).toMatch(/store\.programLeaseMs: expected an integer number of milliseconds, at least 100/)
  })

  it('--store hides a password in its refusal', () => {
    expect(storeFlag('postgres://u:pw@h/db')).toEqual({ url: 'postgres://u:pw@h/db' })
    expect(storeFlag('mysql://u:secret@h/db')).toBe('--store: expected a postgres:// URL, got "mysql://u:***@h/db"')
  })

  it("--store names the database; the config's other store keys still apply (issue 40, item 2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-config-store-'))
    try {
      const config = join(dir, 'toolgate.json')
      writeFileSync(
        config,
        JSON.stringify({ store: { url: 'postgres://u@old/db', programLeaseMs: 4000, poolSize: 3 } }),
      )
      const settings = await readSettings(['--config', config, '--store', 'postgres://u@new/db'], SERVE_FLAGS)
      expect(settings.store).toEqual({ url: 'postgres://u@new/db', programLeaseMs: 4000, poolSize: 3 })
      expect((await readSettings(['--store', 'postgres://u@new/db'], SERVE_FLAGS)).store).toEqual({
        url: 'postgres://u@new/db',
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
