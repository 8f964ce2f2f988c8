// The `limit` alphabetically smallest entries of a stream, kept in a bounded max-heap: listing a
// directory of a million entries keeps a thousand of them and never sorts the rest.

/** Keeps the `limit` items with the smallest `name` (UTF-16 order, as `Array.prototype.sort`). */
export class SmallestNames<T extends { readonly name: string }> {
  private readonly heap: T[] = []

  constructor(private readonly limit: number) {}

  /** Consider one item. */
  offer(item: T): void {
    const heap = this.heap
    if (heap.length < this.limit) {
      heap.push(item)
      let i = heap.length - 1
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (heap[parent].name >= heap[i].name) break
        ;[heap[parent], heap[i]] = [heap[i], heap[parent]]
        i = parent
      }
      return
    }
    if (this.limit === 0 || item.name >= heap[0].name) return
    heap[0] = item
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let largest = i
      if (left < heap.length && heap[left].name > heap[largest].name) largest = left
      if (right < heap.length && heap[right].name > heap[largest].name) largest = right
      if (largest === i) break
      ;[heap[largest], heap[i]] = [heap[i], heap[largest]]
      i = largest
    }
  }

  /** The kept items, sorted by name. */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }
}
