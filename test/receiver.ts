import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** One request as the receiver saw it. */
export interface Arrival {
  path: string
  headers: IncomingMessage['headers']
  body: string
  /** performance.now() when the request's headers had arrived */
  at: number
  /** the whole body has arrived */
  complete: boolean
  /** true once the sender closed the connection before an answer was sent */
  aborted: boolean
  /** performance.now() when the connection closed under it, if it did */
  closedAt: number | undefined
}

/** How to answer: status, headers, body; `hang` never answers (until the sender gives up). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang'

/**
 * A real HTTP receiver on loopback for delivery tests: records every request (headers, body,
 * arrival time) and answers as `answer` says for its path.
 */
export interface Receiver {
  url(path: string): string
  arrivals: Arrival[]
  /** connections opened so far */
  connections: () => number
  setAnswer(answer: (arrival: Arrival) => Answer): void
  /** resolves with the complete requests (matching `path` if given) once there are `count` */
  waitFor(count: number, options?: { path?: string; timeoutMs?: number }): Promise<Arrival[]>
  close(): Promise<void>
}

export async function startReceiver(answer: (arrival: Arrival) => Answer = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  let respond = answer
  const arrivals: Arrival[] = []
  const sockets = new Set<Socket>()
  const hanging = new Set<ServerResponse>()
  let connectionCount = 0
  let waiters: (() => void)[] = []

  const server: Server = createServer((request, response) => {
    const arrival: Arrival = { path: request.url ?? '', headers: request.headers, body: '', at: performance.now(), complete: false, aborted: false, closedAt: undefined }
    arrivals.push(arrival)
    response.on('close', () => {
      if (!response.writableFinished) {
        arrival.aborted = true
        arrival.closedAt = performance.now()
      }
      hanging.delete(response)
    })
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      arrival.body = Buffer.concat(chunks).toString('utf8')
      arrival.complete = true
      for (const wake of waiters.splice(0)) wake()
      const how = respond(arrival)
      if (how === 'hang') {
        hanging.add(response)
        return
      }
      response.writeHead(how.status, how.headers ?? {})
      response.end(how.body ?? '')
    })
  })
  server.on('connection', (socket: Socket) => {
    connectionCount++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    arrivals,
    connections: () => connectionCount,
    setAnswer(next) {
      respond = next
    },
    async waitFor(count, options = {}) {
      const deadline = Date.now() + (options.timeoutMs ?? 10_000)
      const matching = () => arrivals.filter((a) => a.complete && (options.path === undefined || a.path === options.path))
      while (matching().length < count) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`receiver: ${matching().length} of ${count} requests arrived${options.path === undefined ? '' : ` at ${options.path}`}`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 50))
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
      return matching()
    },
    async close() {
      for (const response of hanging) response.destroy()
      for (const socket of sockets) socket.destroy()
      waiters = []
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
