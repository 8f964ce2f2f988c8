// Follows a growing journal file: complete lines are handed over as they are appended, a partial
// last line waits for its newline, and a truncated or replaced file starts over from the top.
import { type FSWatcher, watch } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { StringDecoder } from 'node:string_decoder'

/** Bytes read per step, so a huge journal is consumed in bounded pieces. */
const CHUNK = 1 << 20

export interface JournalFollowerOptions {
  /** Complete lines, in file order (without their newline). */
  onLines(lines: string[]): void
  /** The file shrank or was replaced: everything handed over so far is void. */
  onReset(): void
  /** A read failed (the file vanished, permissions); following continues. */
  onError?(error: unknown): void
  /** Poll interval backing up the file watcher, in ms. Default 250. */
  pollMs?: number
}

export class JournalFollower {
  private offset = 0
  private ino: number | undefined
  private decoder = new StringDecoder('utf8')
  private partial = ''
  private running: Promise<void> | undefined
  private again = false
  private watcher: FSWatcher | undefined
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    readonly path: string,
    private readonly options: JournalFollowerOptions,
  ) {}

  /** Read what is there now, then keep following. */
  async start(): Promise<void> {
    await this.poll()
    if (this.closed) return
    try {
      this.watcher = watch(this.path, { persistent: false }, () => void this.poll())
      this.watcher.on('error', () => {
        this.watcher?.close()
        this.watcher = undefined
      })
    } catch {
      // Polling alone still follows the file.
    }
    this.timer = setInterval(() => void this.poll(), this.options.pollMs ?? 250)
    this.timer.unref()
  }

  /** Read whatever was appended since the last read. Concurrent calls coalesce. */
  poll(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true
      return this.running
    }
    this.running = (async () => {
      try {
        do {
          this.again = false
          await this.step()
        } while (this.again && !this.closed)
      } catch (error) {
        this.options.onError?.(error)
      } finally {
        this.running = undefined
      }
    })()
    return this.running
  }

  private reset(): void {
    this.offset = 0
    this.decoder = new StringDecoder('utf8')
    this.partial = ''
    this.options.onReset()
  }

  private async step(): Promise<void> {
    const info = await stat(this.path)
    if ((this.ino !== undefined && info.ino !== this.ino) || info.size < this.offset) this.reset()
    this.ino = info.ino
    if (info.size === this.offset) return
    const handle = await open(this.path, 'r')
    try {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK, info.size - this.offset))
      while (this.offset < info.size && !this.closed) {
        const { bytesRead } = await handle.read(
          buffer,
          0,
          Math.min(buffer.length, info.size - this.offset),
          this.offset,
        )
        if (bytesRead === 0) break
        this.offset += bytesRead
        const text = this.partial + this.decoder.write(buffer.subarray(0, bytesRead))
        const lines = text.split('\n')
        this.partial = lines.pop() ?? ''
        if (lines.length > 0) this.options.onLines(lines)
      }
    } finally {
      await handle.close()
    }
  }

  /** Stop following. */
  close(): void {
    this.closed = true
    this.watcher?.close()
    if (this.timer !== undefined) clearInterval(this.timer)
  }
}
