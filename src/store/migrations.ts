// The PostgreSQL store's schema, as numbered migrations applied in order under an advisory lock.
// A database whose schema is newer than the last migration here is refused, never written to.
import type { ClientBase } from 'pg'
import { StoreError } from '../journal/store-error.js'
import { SCHEMA_VERSION } from './schema-version.js'

export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

/** Every key of the advisory locks the store takes (two-int form: class, object). */
export const LOCK_CLASS = 0x746f6f6c // 'tool'
export const MIGRATION_LOCK = 1
export const JOURNAL_LOCK = 2

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'journal, turns, decisions, claims',
    sql: `
CREATE TABLE toolgate_journal (
  seq bigserial PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  type text NOT NULL,
  call_id text NOT NULL,
  agent_id text,
  tool_name text NOT NULL,
  record text NOT NULL
);
CREATE INDEX toolgate_journal_call ON toolgate_journal (call_id);
CREATE TABLE toolgate_turns (
  id text PRIMARY KEY,
  state text NOT NULL,
  closed boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE toolgate_turn_calls (
  turn_id text NOT NULL REFERENCES toolgate_turns (id) ON DELETE CASCADE,
  call_id text NOT NULL,
  tool_name text NOT NULL,
  agent_id text,
  PRIMARY KEY (turn_id, call_id)
);
CREATE TABLE toolgate_decisions (
  turn_id text NOT NULL REFERENCES toolgate_turns (id) ON DELETE CASCADE,
  call_id text NOT NULL,
  outcome jsonb NOT NULL,
  decided_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (turn_id, call_id)
);
CREATE TABLE toolgate_claims (
  claim_key text PRIMARY KEY,
  call_id text NOT NULL,
  agent_id text,
  tool_name text NOT NULL,
  instance text NOT NULL,
  pid integer NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now()
);
-- One statement, one transaction per batch: the lock makes sequence order the commit order, so a
-- reader's cursor never passes a record that commits later with a smaller seq.
CREATE FUNCTION toolgate_append(types text[], call_ids text[], agent_ids text[], tool_names text[], records text[])
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE last bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(${LOCK_CLASS}, ${JOURNAL_LOCK});
  INSERT INTO toolgate_journal (type, call_id, agent_id, tool_name, record)
    SELECT * FROM unnest(types, call_ids, agent_ids, tool_names, records);
  SELECT currval(pg_get_serial_sequence('toolgate_journal', 'seq')) INTO last;
  PERFORM pg_notify('toolgate_journal', last::text);
  RETURN last;
END $$;
`,
  },
  {
    version: 2,
    name: 'standing approvals, rate-limit buckets, sessions',
    sql: `
CREATE TABLE toolgate_standing (
  scope text NOT NULL,
  agent_id text,
  tool_name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('allowed-always', 'denied-always')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, tool_name)
);
CREATE TABLE toolgate_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  at_ms double precision NOT NULL
);
CREATE TABLE toolgate_sessions (
  id text PRIMARY KEY,
  instance text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX toolgate_journal_created ON toolgate_journal (created_at);
`,
  },
  {
    version: 3,
    name: 'per-caller credential vault',
    // Sealed by the gateway (AES-256-GCM, who and which server as associated data): the database
    // never holds a secret in the clear, and an edited row fails its tag.
    sql: `
CREATE TABLE toolgate_vault (
  server text NOT NULL,
  subject text NOT NULL,
  iv text NOT NULL,
  tag text NOT NULL,
  data text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (server, subject)
);
`,
  },
  {
    version: 4,
    name: 'spent one-time tokens',
    // A token's row is the proof it was spent: the primary key lets one insert win across instances.
    sql: `
CREATE TABLE toolgate_spent (
  token text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX toolgate_spent_expires ON toolgate_spent (expires_at);
`,
  },
  {
    version: 5,
    name: 'turn leases',
    // Which instance runs a turn's program now, and until when (the database's clock): another
    // instance takes the turn over once the lease expired, one row update deciding between takers.
    sql: `
ALTER TABLE toolgate_turns ADD COLUMN lease_holder text, ADD COLUMN lease_until timestamptz;
`,
  },
]

export { SCHEMA_VERSION }

/** The schema version in the database (0 when toolgate never ran there). */
export async function schemaVersion(client: ClientBase): Promise<number> {
  const exists = await client.query<{ t: string | null }>("SELECT to_regclass('toolgate_schema')::text AS t")
  if (exists.rows[0]?.t == null) return 0
  const result = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM toolgate_schema')
  return result.rows[0]?.v ?? 0
}

function newerRefusal(found: number): StoreError {
  return new StoreError(
    'STORE_SCHEMA',
    `the PostgreSQL store has schema version ${found}, newer than this toolgate knows (${SCHEMA_VERSION}); upgrade toolgate (the store is not used)`,
  )
}

/** Refuse a schema newer than the code; report whether migrations are due. */
export async function checkSchema(client: ClientBase): Promise<{ version: number; due: number }> {
  const version = await schemaVersion(client)
  if (version > SCHEMA_VERSION) throw newerRefusal(version)
  return { version, due: SCHEMA_VERSION - version }
}

/**
 * Apply the migrations after the database's version, up to `target` (default: the newest), each in
 * its own transaction, while holding the migration lock: instances starting together apply each
 * migration once, the others wait and then find nothing to do.
 */
export async function migrate(client: ClientBase, target = SCHEMA_VERSION): Promise<{ from: number; to: number }> {
  await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK])
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS toolgate_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    )
    const from = await schemaVersion(client)
    if (from > SCHEMA_VERSION) throw newerRefusal(from)
    let to = from
    for (const migration of MIGRATIONS) {
      if (migration.version <= from || migration.version > target) continue
      try {
        await client.query('BEGIN')
        await client.query(migration.sql)
        await client.query('INSERT INTO toolgate_schema (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ])
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw new StoreError(
          'STORE_SCHEMA',
          `migration ${migration.version} (${migration.name}) failed and was rolled back: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        )
      }
      to = migration.version
    }
    return { from, to }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK]).catch(() => {})
  }
}
