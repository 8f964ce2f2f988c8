// Spawning a Node process (a fixture upstream, the built CLI) and waiting for it to say it is ready.
import { type ChildProcess, spawn } from 'node:child_process'

/**
 * `node ...args`, resolved with the first match of `ready` in its stdout or stderr; rejected with
 * all it said when it exits before that. The child joins `children` at once, so one that never
 * gets ready is stopped too.
 */
export function spawnReady(args: string[], ready: RegExp, children: ChildProcess[]): Promise<RegExpExecArray> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  return new Promise((resolve, reject) => {
    let out = ''
    const read = (chunk: Buffer) => {
      out += chunk.toString()
      const match = ready.exec(out)
      if (match) resolve(match)
    }
    child.stdout?.on('data', read)
    child.stderr?.on('data', read)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)))
  })
}

/** SIGTERM every child still running, resolved once all have exited. */
export async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined)
          child.once('exit', resolve)
          child.kill('SIGTERM')
        }),
    ),
  )
}

/**
 * SIGKILL every child still running, resolved once all have exited: a test's temp dir is removed
 * after this, and a child signalled but not yet gone may still write into it (ENOTEMPTY).
 */
export async function killChildren(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve(undefined)
          child.once('exit', resolve)
          child.once('error', resolve)
          child.kill('SIGKILL')
        }),
    ),
  )
}
