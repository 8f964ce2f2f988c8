// The list of top-level cards. A short session is drawn whole (so the browser's own find works on
// it); past ALL_ROWS only the rows near the viewport are in the page, between two spacers whose
// heights stand for the rest. Row heights are measured once drawn and estimated until then, so
// drawing costs the same at 300 calls and at 100,000.
import type { ComponentChildren } from 'preact'
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks'
import { html } from './html.js'

/** Up to this many rows, every row is drawn. */
export const ALL_ROWS = 100
/** The height a row is assumed to have until it has been drawn once, in px. */
const ESTIMATE = 160
/** How far beyond the viewport rows are drawn, in px. */
const OVERSCAN = 800
/** The most rows drawn at once, whatever the estimates say. */
const MAX_DRAWN = 120

interface Row {
  id: string
}

export interface VirtualListProps<T extends Row> {
  items: readonly T[]
  row: (item: T) => ComponentChildren
  /** Class of the list element (the rows are its direct children). */
  className: string
}

/** Index of the last row starting at or above `y` (offsets are ascending, offsets[0] = 0). */
function rowAt(offsets: Float64Array, count: number, y: number): number {
  let lo = 0
  let hi = count - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (offsets[mid] <= y) lo = mid
    else hi = mid - 1
  }
  return Math.max(0, lo)
}

export function VirtualList<T extends Row>(props: VirtualListProps<T>) {
  const { items } = props
  const list = useRef<HTMLElement>(null)
  const heights = useRef(new Map<string, number>())
  const [version, setVersion] = useState(0)
  const [range, setRange] = useState({ start: 0, end: 30 })
  const whole = items.length <= ALL_ROWS

  // offsets[i]: where row i starts; offsets[n]: the height of the whole list.
  const offsets = useMemo(() => {
    const out = new Float64Array(items.length + 1)
    const known = heights.current
    for (let i = 0; i < items.length; i++) out[i + 1] = out[i] + (known.get(items[i].id) ?? ESTIMATE)
    return out
  }, [items, version])

  const place = useRef<() => void>(() => undefined)
  place.current = () => {
    const element = list.current
    if (element === null || whole) return
    const top = -element.getBoundingClientRect().top
    let start = rowAt(offsets, items.length, top - OVERSCAN)
    let end = rowAt(offsets, items.length, top + window.innerHeight + OVERSCAN) + 1
    if (end - start > MAX_DRAWN) {
      const first = rowAt(offsets, items.length, top)
      start = Math.max(0, first - 10)
      end = start + MAX_DRAWN
    }
    end = Math.min(end, items.length)
    if (start !== range.start || end !== range.end) setRange({ start, end })
  }

  useEffect(() => {
    let frame = 0
    const onScroll = () => {
      if (frame !== 0) return
      frame = requestAnimationFrame(() => {
        frame = 0
        place.current()
      })
    }
    window.addEventListener('scroll', onScroll, { passive: true })
    window.addEventListener('resize', onScroll)
    return () => {
      window.removeEventListener('scroll', onScroll)
      window.removeEventListener('resize', onScroll)
      if (frame !== 0) cancelAnimationFrame(frame)
    }
  }, [])

  // Measure the drawn rows (top to top, so margins count), then place the window again: the
  // measured heights may show that more or fewer rows fill the viewport.
  useLayoutEffect(() => {
    const element = list.current
    if (element === null || whole) return
    const children = element.children
    let changed = false
    for (let i = 1; i < children.length - 1; i++) {
      const data = (children[i] as HTMLElement).dataset
      const id = data.callId ?? data.rowId
      if (id === undefined) continue
      const height = children[i + 1].getBoundingClientRect().top - children[i].getBoundingClientRect().top
      if (Math.abs((heights.current.get(id) ?? -1) - height) > 0.5) {
        heights.current.set(id, height)
        changed = true
      }
    }
    if (changed) setVersion((v) => v + 1)
    else place.current()
  })

  if (whole) return html`<main class=${props.className}>${items.map((item) => props.row(item))}</main>`
  const start = Math.min(range.start, items.length)
  const end = Math.min(Math.max(range.end, start), items.length)
  const before = offsets[start]
  const after = offsets[items.length] - offsets[end]
  return html`<main class=${props.className} ref=${list}>
    <div class="spacer" style=${{ height: `${before}px` }}></div>
    ${items.slice(start, end).map((item) => props.row(item))}
    <div class="spacer" style=${{ height: `${after}px` }}></div>
  </main>`
}
