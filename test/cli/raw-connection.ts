// One raw HTTP/1.1 connection to a local server, for tests of what happens on the connection itself
// (keep-alive, reuse after idling): requests are written by hand, and responses read off the socket.
import { connect, type Socket } from 'node:net'

/** One raw HTTP/1.1 connection: write a request, read its response head (and the body, when it is chunked). */
export class Connection {
  private buffered = ''
  private ended = false
  private waiter: (() => void) | undefined
  private constructor(
    private readonly socket: Socket,
    private readonly port: number,
  ) {
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      this.buffered += chunk
      this.waiter?.()
    })
    const over = () => {
      this.ended = true
      this.waiter?.()
    }
    socket.on('end', over)
    socket.on('close', over)
    socket.on('error', over)
  }

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket, port)))
      socket.once('error', reject)
    })
  }

  /** POST `body` to /mcp; the response's status and headers once it is complete. */
  post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers }> {
    const text = JSON.stringify(body)
    return this.send(
      'POST',
      '/mcp',
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': String(Buffer.byteLength(text)),
        ...headers,
      },
      text,
    )
  }

  /** GET `path`; the response's status and headers once it is complete. */
  get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers }> {
    return this.send('GET', path, headers, '')
  }

  private async send(
    method: string,
    path: string,
    headers: Record<string, string>,
    text: string,
  ): Promise<{ status: number; headers: Headers }> {
    const lines = [
      `${method} ${path} HTTP/1.1`,
      `host: 127.0.0.1:${this.port}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ]
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n${text}`)
    const head = await this.until(() => this.buffered.indexOf('\r\n\r\n'))
    const [statusLine, ...fields] = this.buffered.slice(0, head).split('\r\n')
    const parsed = new Headers(fields.map((field) => field.split(/:\s*/, 2) as [string, string]))
    let rest = head + 4
    if (parsed.get('transfer-encoding') === 'chunked') rest = (await this.until(() => this.endOfChunks(head + 4))) + 5
    else rest += Number(parsed.get('content-length') ?? 0)
    this.buffered = this.buffered.slice(rest)
    return { status: Number(statusLine.split(' ')[1]), headers: parsed }
  }

  close(): void {
    this.socket.destroy()
  }

  private endOfChunks(from: number): number {
    const at = this.buffered.indexOf('\r\n0\r\n\r\n', from - 2)
    return at < 0 ? -1 : at + 2
  }

  /** Wait until `find` gives an index; fails when the server closes the connection first. */
  private async until(find: () => number): Promise<number> {
    for (;;) {
      const at = find()
      if (at >= 0) return at
      if (this.ended) throw new Error('the server closed the connection')
      await new Promise<void>((resolve) => {
        this.waiter = resolve
      })
      this.waiter = undefined
    }
  }
}
