// A worker thread of the encoder pool: loads Universal Sentence Encoder lite once, then embeds
// the batches the pool sends, one at a time, off the main thread.
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import type { EncoderJobMessage, EncoderWorkerData, EncoderWorkerMessage } from './encoder-worker-protocol.js'
import { loadUseLiteEncoder } from './use-lite-encoder.js'

const port = parentPort
if (port === null) throw new Error('encoder-worker runs only as a worker thread')
const post = (message: EncoderWorkerMessage, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer)
const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))

try {
  const encoder = await loadUseLiteEncoder(createRequire((workerData as EncoderWorkerData).requireFrom))
  port.on('message', async ({ job, texts }: EncoderJobMessage) => {
    try {
      const embedded = await encoder.embed(texts)
      const dimensions = embedded[0]?.length ?? 0
      const vectors = new Float32Array(dimensions * embedded.length)
      embedded.forEach((vector, i) => {
        vectors.set(vector, i * dimensions)
      })
      post({ type: 'done', job, vectors, dimensions }, [vectors.buffer])
    } catch (error) {
      post({ type: 'error', job, message: reason(error) })
    }
  })
  post({ type: 'ready', id: encoder.id, runtime: encoder.runtime })
} catch (error) {
  post({ type: 'failed', message: reason(error) })
}
