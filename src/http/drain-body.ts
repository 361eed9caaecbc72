import type { IncomingMessage } from 'node:http'

/** Most of a refused body read and dropped before its answer: more and the connection is cut. */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024
/** Longest a refused body is read for before its answer. */
export const DRAIN_MAX_MS = 5_000

/**
 * read: the body arrived whole; cut: it is still arriving past a bound (or was declared past the
 * byte bound); gone: the connection closed meanwhile.
 */
export type DrainOutcome = 'read' | 'cut' | 'gone'

export interface DrainLimits {
  maxBytes: number
  maxMs: number
}

/**
 * Reads and drops the rest of a request's body that the server refused, within the limits.
 * An answer sent while the client is still writing, followed by the close, resets the connection
 * under the client, which then never reads the answer (fetch: EPIPE, "fetch failed"); read to its
 * end first, the body leaves the client free to read the answer. A body still arriving at a
 * limit is left unread, and the connection is closed after the answer.
 */
export function drainBody(request: IncomingMessage, limits: DrainLimits = { maxBytes: DRAIN_MAX_BYTES, maxMs: DRAIN_MAX_MS }): Promise<DrainOutcome> {
  if (request.readableEnded) return Promise.resolve('read')
  if (request.destroyed) return Promise.resolve('gone')
  // Declared longer than the bound: reading it would only end in a cut.
  if (Number(request.headers['content-length']) > limits.maxBytes) return Promise.resolve('cut')
  return new Promise((resolve) => {
    let read = 0
    const finish = (outcome: DrainOutcome) => {
      clearTimeout(timer)
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('close', onClose)
      request.off('error', onClose)
      if (outcome === 'cut') request.pause()
      resolve(outcome)
    }
    const onData = (chunk: Buffer) => {
      read += chunk.length
      if (read > limits.maxBytes) finish('cut')
    }
    const onEnd = () => finish('read')
    const onClose = () => finish('gone')
    const timer = setTimeout(() => finish('cut'), limits.maxMs)
    request.on('data', onData)
    request.on('end', onEnd)
    request.on('close', onClose)
    request.on('error', onClose)
    request.resume()
  })
}
