// Child processes for the gateway benches: a free loopback port, a Node process awaited until its
// stderr says it is ready, and a clean stop.
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Spawn a Node process and resolve once its stderr matches `ready` (returning the match). */
export function spawnUntil(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
  let err = ''
  const match = new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      const found = ready.exec(err)
      if (found) resolve(found)
    })
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)))
  })
  return { child, match }
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}
