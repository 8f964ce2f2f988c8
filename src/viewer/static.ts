// One journal read whole into a session, and the self-contained static page of it.
import { writeFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { readJournal } from '../journal/read-journal.js'
import { loadViewerAssets } from './assets.js'
import { parseJournalLine, toLineRecord } from './journal-line.js'
import type { SessionSnapshot } from './model.js'
import { staticPageHtml } from './page.js'
import { presenterTable, type ToolPresenter } from './presenters.js'
import { SessionState } from './session.js'

/** Options shared by the static and the served viewer. */
export interface ViewerSessionOptions {
  /** Presenters of the session's own tools (the reference tools' are built in). */
  presenters?: readonly ToolPresenter[]
  /** Title shown on the page. Default: the journal's file name. */
  title?: string
  /** The longest journal line read, in bytes (as `readJournal`'s option). Default 64 MiB. */
  maxLineBytes?: number
}

/** Fold journal text (JSON lines) into a session. Malformed and unknown lines are skipped. */
export function sessionFromJournalText(text: string, presenters: ReadonlyMap<string, ToolPresenter>): SessionState {
  const session = new SessionState(presenters)
  for (const line of text.split('\n')) {
    const record = parseJournalLine(line)
    if (record !== undefined) session.ingest(record)
  }
  return session
}

/** The session of the journal at `journalPath` as page data. */
export async function readSessionSnapshot(
  journalPath: string,
  options?: ViewerSessionOptions,
): Promise<SessionSnapshot> {
  const session = new SessionState(presenterTable(options?.presenters))
  for await (const record of readJournal(journalPath, { maxLineBytes: options?.maxLineBytes })) {
    const line = toLineRecord(record)
    if (line !== undefined) session.ingest(line)
  }
  const turns = session.turnViews()
  return {
    title: options?.title ?? basename(journalPath),
    cards: session.cards(),
    approve: false,
    ...(turns.length > 0 ? { turns } : {}),
  }
}

/** The self-contained static page of the journal at `journalPath`. */
export async function renderStaticViewer(journalPath: string, options?: ViewerSessionOptions): Promise<string> {
  const [snapshot, assets] = await Promise.all([readSessionSnapshot(journalPath, options), loadViewerAssets()])
  return staticPageHtml(snapshot, assets)
}

/** Write the self-contained static page of `journalPath` to `outPath`. */
export async function writeStaticViewer(
  journalPath: string,
  outPath: string,
  options?: ViewerSessionOptions,
): Promise<void> {
  await writeFile(outPath, await renderStaticViewer(journalPath, options))
}
