import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectionsCheckingInterval } from '../../src/app.js'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { startTestServer, type TestServer } from '../helper.js'
import { cleanUp, exitWithin, launch, SERVER } from '../processes.js'

// Short enough to keep the suite quick, long enough that "just inside" has a wide margin.
const LIMIT_MS = 1_500
const CHECK_MS = connectionsCheckingInterval(LIMIT_MS)
// Scheduling slack for a slow, busy 2-core machine.
const SLACK_MS = 1_000

/** A raw connection that records what the server sends, when it ends its side, and when it closes. */
interface RawClient {
  socket: Socket
  received: () => string
  /** ms since connect when the server ended its side (FIN), or undefined */
  endedAt: () => number | undefined
  /** resolves with ms since connect when the server has ended its side or the connection closed */
  ended: Promise<number>
  /** resolves once `received` holds a complete response (head and Content-Length body) */
  responses: (count: number) => Promise<string>
}

async function rawClient(port: number): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1')
  let text = ''
  let endedAt: number | undefined
  const watchers = new Set<() => void>()
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const start = Date.now()
  socket.setEncoding('utf8')
  socket.on('error', () => undefined)
  socket.on('data', (chunk: string) => {
    text += chunk
    for (const watcher of watchers) watcher()
  })
  const ended = new Promise<number>((resolve) => {
    const done = () => {
      endedAt ??= Date.now() - start
      resolve(endedAt)
      for (const watcher of watchers) watcher()
    }
    socket.once('end', done)
    socket.once('close', done)
  })
  const responses = (count: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (completeResponses(text) >= count) {
          watchers.delete(check)
          resolve(text)
        } else if (endedAt !== undefined) {
          watchers.delete(check)
          reject(new Error(`connection ended after ${JSON.stringify(text)}`))
        }
      }
      watchers.add(check)
      check()
    })
  return { socket, received: () => text, endedAt: () => endedAt, ended, responses }
}

/** How many complete responses (with Content-Length bodies) the text holds. */
function completeResponses(text: string): number {
  let count = 0
  let rest = text
  for (;;) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) return count
    const length = Number(/content-length:\s*(\d+)/i.exec(rest.slice(0, end))?.[1] ?? NaN)
    if (Buffer.byteLength(rest.slice(end + 4)) < length) return count
    count += 1
    rest = rest.slice(end + 4 + length)
  }
}

function head(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n')
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Writes `body` one byte every `everyMs`, until it is all sent or the socket is gone. */
async function trickle(socket: Socket, body: string, everyMs: number): Promise<void> {
  for (const byte of body) {
    if (socket.destroyed || !socket.writable) return
    socket.write(byte)
    await sleep(everyMs)
  }
}

const CUSTOMER = JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })

function postHead(server: { port: number }, key: Record<string, string>, requestId: string, length: number): string {
  return [
    'POST /api/v0/customers HTTP/1.1',
    `Host: 127.0.0.1:${server.port}`,
    ...Object.entries(key).map(([name, value]) => `${name}: ${value}`),
    'content-type: application/json',
    `content-length: ${length}`,
    `x-request-id: ${requestId}`,
    '',
    '',
  ].join('\r\n')
}

describe(`REQUEST_TIMEOUT_MS (${LIMIT_MS} ms here)`, () => {
  let server: TestServer
  let port: number
  let key: Record<string, string>

  beforeAll(async () => {
    server = await startTestServer({ config: { requestTimeoutMs: LIMIT_MS } })
    port = Number(new URL(server.baseUrl).port)
    key = (await server.createKey()).headers
  })
  afterAll(async () => {
    await server.close()
  })

  it('a body trickled slower than the limit gets 408 in the contract body with its x-request-id, and the connection is closed', async () => {
    const client = await rawClient(port)
    client.socket.write(postHead({ port }, key, 'slow-body-1', CUSTOMER.length))
    // About 4 s for the whole body: well past the limit.
    void trickle(client.socket, CUSTOMER, 50)
    const endedAt = await client.ended
    const answer = head(client.received())
    expect(answer.status).toBe(408)
    expect(answer.headers['x-request-id']).toBe('slow-body-1')
    expect(answer.headers.connection).toBe('close')
    expect(JSON.parse(answer.body)).toEqual({ statusCode: 408, error: 'Request Timeout', message: 'The request was not received in time' })
    // Not before the limit; within the limit plus one check of Node's (plus slack).
    expect(endedAt).toBeGreaterThanOrEqual(LIMIT_MS - 100)
    expect(endedAt).toBeLessThan(LIMIT_MS + CHECK_MS + SLACK_MS)
    client.socket.destroy()
  })

  it('headers trickled slower than the limit get 408 too', async () => {
    const client = await rawClient(port)
    void trickle(client.socket, postHead({ port }, key, 'slow-head-1', CUSTOMER.length), 50)
    const endedAt = await client.ended
    const answer = head(client.received())
    expect(answer.status).toBe(408)
    expect(answer.headers['x-request-id']).toMatch(/\S/)
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 408, error: 'Request Timeout' })
    expect(endedAt).toBeLessThan(LIMIT_MS + CHECK_MS + SLACK_MS)
    client.socket.destroy()
  })

  it('a body that finishes arriving well inside the limit is served', async () => {
    const client = await rawClient(port)
    client.socket.write(postHead({ port }, key, 'in-time-1', CUSTOMER.length))
    // Spread over about 40 % of the limit.
    await trickle(client.socket, CUSTOMER, Math.floor((LIMIT_MS * 0.4) / CUSTOMER.length))
    const answer = head(await client.responses(1))
    expect(answer.status).toBe(201)
    expect(answer.headers['x-request-id']).toBe('in-time-1')
    client.socket.destroy()
  })

  it('a response the client reads slowly (paused for twice the limit) is not cut', async () => {
    const client = await rawClient(port)
    client.socket.pause()
    client.socket.write(`GET /api/v0/openapi.json HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
    await sleep(2 * LIMIT_MS)
    client.socket.resume()
    const answer = head(await client.responses(1))
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toHaveProperty('paths')
    client.socket.destroy()
  })

  it('a keep-alive connection idle for twice the limit between requests is not cut', async () => {
    const client = await rawClient(port)
    const get = `GET /api/v0/health/public HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`
    client.socket.write(get)
    expect(head(await client.responses(1)).status).toBe(200)
    await sleep(2 * LIMIT_MS)
    expect(client.endedAt()).toBeUndefined()
    client.socket.write(get)
    const second = await client.responses(2)
    expect(second.match(/HTTP\/1\.1 200 /g)).toHaveLength(2)
    expect(second).not.toMatch(/ 408 /)
    client.socket.destroy()
  })
})

describe('SIGTERM with a client trickling its body', () => {
  afterAll(async () => {
    cleanUp()
    await dropFreshDatabases()
  })

  it('answers it 408 and exits 0 within a few seconds, not at the 30 s deadline', async () => {
    const { url } = await freshDatabase()
    // The default limit (30 s): the trickler would not be cut by it before the old deadline.
    const running = launch(SERVER, [], { PORT: '0', DATABASE_URL: url, NODE_ENV: 'development' })
    const serverPort = Number((await running.waitFor(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/))[1])
    // The development key printed at start: the request is authenticated and waits for its body.
    const devKey = {
      'x-client-key': (await running.waitFor(/x-client-key:\s+(\S+)/))[1] ?? '',
      'x-client-secret': (await running.waitFor(/x-client-secret:\s+(\S+)/))[1] ?? '',
    }
    const client = await rawClient(serverPort)
    client.socket.write(postHead({ port: serverPort }, devKey, 'trickler-1', 1_000))
    const trickling = setInterval(() => {
      if (client.socket.writable) client.socket.write('{')
    }, 1_000)
    try {
      await sleep(1_500)
      running.child.kill('SIGTERM')
      const signalledAt = Date.now()
      const exit = await exitWithin(running, 15_000)
      const exitMs = Date.now() - signalledAt
      expect(exit).toEqual({ code: 0, signal: null })
      // 3 s of grace for requests still arriving, a 0.1 s check, up to 2 s for the client to hang up.
      expect(exitMs).toBeLessThan(8_000)
      await client.ended
      const answer = head(client.received())
      expect(answer.status).toBe(408)
      expect(answer.headers['x-request-id']).toBe('trickler-1')
      expect(JSON.parse(answer.body)).toEqual({ statusCode: 408, error: 'Request Timeout', message: 'The request was not received in time' })
    } finally {
      clearInterval(trickling)
      client.socket.destroy()
    }
  })
})
