import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLIENT_ABORTED } from '../../src/http/client-errors.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * A client that hangs up while its body is arriving: Node's request stream fails with its own
 * ECONNRESET ("aborted"), which is not the database's. Spoken over raw TCP, so the body can stop
 * short of its Content-Length and the socket be destroyed mid-body.
 */

let server: TestServer
let key: TestKey
beforeAll(async () => {
  // At debug, so the one line an abort may write is seen (and waited for).
  server = await startTestServer({ config: { logLevel: 'debug' } })
  key = await server.createKey()
})
afterAll(async () => server.close())

function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket))
    socket.once('error', reject)
  })
}

interface LogLine {
  level: number
  msg?: string
  reqId?: string
  err?: unknown
}

function logLines(): LogLine[] {
  return server
    .logs()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogLine)
}

/** The request's lines, once the error handler has written its line about the error (whatever its level). */
async function handled(requestId: string, ms = 5_000): Promise<LogLine[]> {
  const deadline = Date.now() + ms
  for (;;) {
    const lines = logLines().filter((line) => line.reqId === requestId)
    if (lines.some((line) => line.err !== undefined)) return lines
    if (Date.now() > deadline) throw new Error(`the error of ${requestId} was not handled; logs:\n${server.logs()}`)
    await sleep(20)
  }
}

const BODIES = [
  { encoding: 'JSON', path: '/api/v0/customers', contentType: 'application/json', partial: '{"first_name":"Ada","la' },
  { encoding: 'url-encoded', path: '/api/v0/products', contentType: 'application/x-www-form-urlencoded', partial: 'name=Lamp&price=1' },
]

const HANG_UPS = [
  { hangUp: 'closes (FIN)', hangUpOn: (socket: Socket) => socket.destroy() },
  { hangUp: 'resets (RST)', hangUpOn: (socket: Socket) => socket.resetAndDestroy() },
]

describe('a client that hangs up mid-body', () => {
  it.each(BODIES.flatMap((body) => HANG_UPS.map((hangUp) => ({ ...body, ...hangUp }))))(
    '$encoding body, the client $hangUp: a debug line, never "database unavailable"; the server still serves',
    async ({ encoding, path, contentType, partial, hangUp, hangUpOn }) => {
      const requestId = `abort-${encoding}-${hangUp.slice(-4, -1)}`
      const socket = await openSocket(server.baseUrl)
      socket.on('error', () => undefined)
      socket.write(
        [
          `POST ${path} HTTP/1.1`,
          'Host: localhost',
          `x-client-key: ${key.clientKey}`,
          `x-client-secret: ${key.clientSecret}`,
          `x-request-id: ${requestId}`,
          `Content-Type: ${contentType}`,
          'Content-Length: 1000',
          '',
          partial,
        ].join('\r\n'),
      )
      // Authentication has run and the body is being read when the connection goes.
      await sleep(300)
      hangUpOn(socket)

      const lines = await handled(requestId)
      expect(logLines().filter((line) => line.msg?.includes('database unavailable') === true)).toEqual([])
      // Apart from the access line every request has, nothing above debug.
      expect(lines.filter((line) => line.msg !== 'incoming request' && line.level > 20)).toEqual([])
      expect(lines.filter((line) => line.err !== undefined)).toMatchObject([{ level: 20, msg: CLIENT_ABORTED }])

      const res = await server.request('GET', '/api/v0/customers', { key })
      expect(res.status).toBe(200)
    },
  )
})
