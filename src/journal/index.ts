// The session journal (issue #14): one JSON line per pipeline event, and its reader.
export { Journal, type JournalConfig } from './journal.js'
export { DEFAULT_MAX_LINE_BYTES, JournalReadError } from './open-journal.js'
export { type ReadJournalOptions, readJournal, type SkippedJournalLine } from './read-journal.js'
export type * from './records.js'
export { JOURNAL_VERSION } from './records.js'
