// The viewer's event stream as tests read it.
import { expect } from 'vitest'
import type { SessionCard } from '../../src/viewer/model.js'

/**
 * An event's data lines: the head's JSON, then per card a row header (id, seq, parent, agent, tool,
 * status) and the card's JSON. Answers the head with the cards, checking each header against its card.
 */
export function decodeFrame(lines: string[]): Record<string, unknown> & { cards: SessionCard[] } {
  const cards: SessionCard[] = []
  for (let i = 1; i < lines.length; i += 2) {
    const card = JSON.parse(lines[i + 1]) as SessionCard
    expect(JSON.parse(lines[i])).toEqual([card.id, card.seq, card.parentId, card.agent, card.tool, card.status.kind])
    cards.push(card)
  }
  return { ...(JSON.parse(lines[0]) as Record<string, unknown>), cards }
}
