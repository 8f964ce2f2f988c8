// `toolgate/store`: the state store behind one interface, embedded (files) or PostgreSQL. A
// separate entry keeps `pg` off the package root; it loads only when a PostgreSQL store opens.
export type { CallClaimRecord, ClaimedCall } from '../journal/claims.js'
export { createFileStore, type FileStoreOptions } from '../journal/file-store.js'
export type {
  BucketLimit,
  BucketTake,
  ClaimDecision,
  DecideResult,
  LeasedSaveOptions,
  PendingCall,
  StandingApproval,
  Store,
  StoreClaim,
  StoredJournalRecord,
  StoredSession,
  StoredTurn,
  StoreReadOptions,
  StoreStatus,
  TurnLease,
} from '../journal/store.js'
export { StoreError } from '../journal/store-error.js'
export { standingApprovalsIn } from '../journal/store-standing.js'
export { createPostgresStore, type PostgresStoreOptions } from './postgres.js'
export { SCHEMA_VERSION } from './schema-version.js'
