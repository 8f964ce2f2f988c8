// One card as JSON, for the event stream and the static file alike.
import type { SessionCard } from './model.js'

/**
 * One card as JSON. Cards are depth-bounded when built, so this should not fail; if it still does,
 * the card is replaced by its header and a note, and the rest of the session is sent as usual.
 */
export function cardJson(card: SessionCard): string {
  try {
    return JSON.stringify(card)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    const stub: SessionCard = {
      ...card,
      args: null,
      call: { card: 'generic', title: card.tool },
      result: null,
      diffs: [],
      program: null,
      notes: [...card.notes, `this call cannot be shown in full: ${reason}`],
    }
    return JSON.stringify(stub)
  }
}
