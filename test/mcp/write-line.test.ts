// Issue 35, Performance: the messages to an upstream's stdin written in one turn of the event loop
// go out in one write (the stream corked until the turn ends), in order, and a message of a later
// turn in a write of its own; a stream's backpressure still holds the sender until it drains.
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { writeLineBatched } from '../../src/mcp/protocol/write-line.js'

/** A stream that records each write it is asked to make, as the list of lines it carries. */
function recording(highWaterMark = 16 * 1024) {
  const writes: string[][] = []
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      writes.push([chunk.toString()])
      done()
    },
    writev(chunks, done) {
      writes.push(chunks.map(({ chunk }) => String(chunk)))
      done()
    },
  })
  return { stream, writes }
}

const message = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'tools/call', params: { name: 'x' } })
const line = (id: number) => `${JSON.stringify(message(id))}\n`
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('writeLineBatched', () => {
  it('writes the messages of one turn together, in order, and a later turn on its own', async () => {
    const { stream, writes } = recording()
    await Promise.all([
      writeLineBatched(stream, message(1)),
      writeLineBatched(stream, message(2)),
      writeLineBatched(stream, message(3)),
    ])
    await nextTurn()
    expect(writes).toEqual([[line(1), line(2), line(3)]])
    await writeLineBatched(stream, message(4))
    await nextTurn()
    expect(writes).toEqual([[line(1), line(2), line(3)], [line(4)]])
  })

  it('holds a sender past the high-water mark until the stream drains', async () => {
    const { stream, writes } = recording(64)
    let sent = false
    const pending = writeLineBatched(stream, message(1)).then(() => {
      sent = true
    })
    expect(sent).toBe(false)
    await pending
    expect(writes).toEqual([[line(1)]])
  })
})
