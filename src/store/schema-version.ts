// The newest schema version of the PostgreSQL store, on its own so that the public declarations
// can name it without pulling in the migrations' `pg` types (consumers need no @types/pg).

/** The newest schema version this code knows (the last entry of the migrations). */
export const SCHEMA_VERSION = 5
