import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * Errors answered before a route runs: the router's (bad percent-encoding, an over-long path
 * parameter), Node's parser's (malformed requests, headers over the limit) and Node's own checks
 * (Host, Expect). Spoken over raw TCP, so the requests reach the server exactly as written.
 */

interface RawResponse {
  statusLine: string
  /** header names in lower case */
  headers: Record<string, string>
  body: unknown
}

const GENERATED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
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

/** Everything the server sends until it closes the connection. */
function readUntilClosed(socket: Socket, ms = 5_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the connection was not closed within ${ms} ms; read: ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`))
    }, ms)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks))
    })
  })
}

/** Back-to-back responses, each with a Content-Length (as this server writes them). */
function parseResponses(data: Buffer): RawResponse[] {
  const responses: RawResponse[] = []
  let rest = data
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n')
    if (headEnd === -1) throw new Error(`incomplete response head: ${rest.toString('latin1').slice(0, 300)}`)
    const [statusLine = '', ...lines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'])
    if (!Number.isInteger(length)) throw new Error(`a response without Content-Length: ${statusLine}`)
    const bodyStart = headEnd + 4
    const text = rest.subarray(bodyStart, bodyStart + length).toString('utf8')
    responses.push({ statusLine, headers, body: text === '' ? undefined : JSON.parse(text) })
    rest = rest.subarray(bodyStart + length)
  }
  return responses
}

/** Sends the bytes on a new connection; every response written before the server closed it. */
async function exchange(request: string): Promise<RawResponse[]> {
  const socket = await openSocket(server.baseUrl)
  const received = readUntilClosed(socket)
  socket.write(request)
  return parseResponses(await received)
}

async function exchangeOne(request: string): Promise<RawResponse> {
  const responses = await exchange(request)
  expect(responses).toHaveLength(1)
  return responses[0] as RawResponse
}

/** A GET with the given headers lines, closing the connection after the answer. */
function get(path: string, ...headerLines: string[]): string {
  return ['GET ' + path + ' HTTP/1.1', 'Host: localhost', ...headerLines, 'Connection: close', '', ''].join('\r\n')
}

function expectContractBody(response: RawResponse, statusLine: string, message: string): void {
  expect(response.statusLine).toBe(statusLine)
  const [, status = '', ...reason] = statusLine.split(' ')
  expect(response.body).toEqual({ statusCode: Number(status), error: reason.join(' '), message })
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
}

describe('router errors (bad percent-encoding, over-long path parameters)', () => {
  it('bad percent-encoding → 400 in the contract body, the caller\'s x-request-id kept, no code', async () => {
    const res = await exchangeOne(get('/api/v0/webhooks/%zz', 'x-request-id: trace-bad-url'))
    expectContractBody(res, 'HTTP/1.1 400 Bad Request', 'Path is not valid percent-encoding')
    expect(res.headers['x-request-id']).toBe('trace-bad-url')
  })

  it('bad percent-encoding in an unknown path → the same 400, with a generated x-request-id', async () => {
    for (const path of ['/api/v0/nothing/%zz', '/api/v0/%E0%A4%A', '/api/v0/webhooks/%']) {
      const res = await exchangeOne(get(path, 'x-request-id: not a sane id'))
      expectContractBody(res, 'HTTP/1.1 400 Bad Request', 'Path is not valid percent-encoding')
      expect(res.headers['x-request-id']).toMatch(GENERATED_ID)
    }
  })

  it('a path parameter over 100 characters → 414 URI Too Long; 100 characters are routed and validated', async () => {
    const auth = [`x-client-key: ${key.clientKey}`, `x-client-secret: ${key.clientSecret}`]
    const over = await exchangeOne(get(`/api/v0/webhooks/${'a'.repeat(101)}`, ...auth, 'x-request-id: trace-414'))
    expectContractBody(over, 'HTTP/1.1 414 URI Too Long', 'A path parameter is longer than 100 characters')
    expect(over.headers['x-request-id']).toBe('trace-414')

    const at = await exchangeOne(get(`/api/v0/webhooks/${'a'.repeat(100)}`, ...auth))
    expect(at.statusLine).toBe('HTTP/1.1 400 Bad Request') // not a UUID
    expect(at.headers['x-request-id']).toMatch(GENERATED_ID)
  })

  it('the limit counts decoded characters, the same on every parameter', async () => {
    const auth = [`x-client-key: ${key.clientKey}`, `x-client-secret: ${key.clientSecret}`]
    // 100 × "é", 600 characters as sent
    const at = await exchangeOne(get(`/api/v0/customers/${'%C3%A9'.repeat(100)}`, ...auth))
    expect(at.statusLine).toBe('HTTP/1.1 400 Bad Request')
    const over = await exchangeOne(get(`/api/v0/customers/${'%C3%A9'.repeat(101)}/liquidation_addresses`, ...auth))
    expectContractBody(over, 'HTTP/1.1 414 URI Too Long', 'A path parameter is longer than 100 characters')
    // An unknown path is not found, whatever the length of its segments.
    const unknown = await exchangeOne(get(`/api/v0/nothing/${'a'.repeat(200)}`))
    expect(unknown.statusLine).toBe('HTTP/1.1 404 Not Found')
  })

  it('a router error leaves the connection usable (the next request on it is answered)', async () => {
    const socket = await openSocket(server.baseUrl)
    const received = readUntilClosed(socket)
    socket.write(['GET /api/v0/webhooks/%zz HTTP/1.1', 'Host: localhost', '', ''].join('\r\n') + get('/api/v0/health/public'))
    const [bad, next] = parseResponses(await received)
    expect(bad?.statusLine).toBe('HTTP/1.1 400 Bad Request')
    expect(next?.statusLine).toBe('HTTP/1.1 200 OK')
    expect(next?.body).toMatchObject({ status: 'ok' })
  })
})

describe('Node\'s checks, answered in the contract body', () => {
  it('HTTP/1.1 without Host → 400 Host header is required (HTTP/1.0 needs none)', async () => {
    const res = await exchangeOne(['GET /api/v0/health/public HTTP/1.1', 'x-request-id: trace-no-host', 'Connection: close', '', ''].join('\r\n'))
    expectContractBody(res, 'HTTP/1.1 400 Bad Request', 'Host header is required')
    expect(res.headers['x-request-id']).toBe('trace-no-host')

    const http10 = await exchangeOne(['GET /api/v0/health/public HTTP/1.0', '', ''].join('\r\n'))
    expect(http10.statusLine).toBe('HTTP/1.1 200 OK')
  })

  it('an Expect other than 100-continue → 417', async () => {
    const res = await exchangeOne(get('/api/v0/health/public', 'Expect: something-else', 'x-request-id: trace-417'))
    expectContractBody(res, 'HTTP/1.1 417 Expectation Failed', 'Expect supports only 100-continue')
    expect(res.headers['x-request-id']).toBe('trace-417')
  })

  it('CONNECT → 501, then the connection is closed (Node would drop it without a word)', async () => {
    const res = await exchangeOne(['CONNECT example.com:443 HTTP/1.1', 'Host: example.com:443', 'x-request-id: trace-connect', '', ''].join('\r\n'))
    expectContractBody(res, 'HTTP/1.1 501 Not Implemented', 'CONNECT is not supported')
    expect(res.headers['x-request-id']).toBe('trace-connect')
    expect(res.headers.connection).toBe('close')
  })
})

describe('parser errors: a complete response, then the connection is closed', () => {
  function expectClosingAnswer(res: RawResponse, statusLine: string, message: string): void {
    expectContractBody(res, statusLine, message)
    expect(res.headers.connection).toBe('close')
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(res.body)))
  }

  it('headers over 16 KiB → 431, with the caller\'s x-request-id read from the head', async () => {
    const res = await exchangeOne(get('/api/v0/health/public', 'x-request-id: trace-431', `x-padding: ${'a'.repeat(20_000)}`))
    expectClosingAnswer(res, 'HTTP/1.1 431 Request Header Fields Too Large', 'Request line and headers are larger than 16 KiB')
    expect(res.headers['x-request-id']).toBe('trace-431')
  })

  it('a request line over 16 KiB → the same 431 (Node counts it with the headers)', async () => {
    const res = await exchangeOne(get(`/api/v0/health/public?q=${'a'.repeat(20_000)}`))
    expectClosingAnswer(res, 'HTTP/1.1 431 Request Header Fields Too Large', 'Request line and headers are larger than 16 KiB')
    expect(res.headers['x-request-id']).toMatch(GENERATED_ID)
  })

  it('malformed requests → 400 Malformed HTTP request', async () => {
    const malformed = [
      'GARBAGE\r\n\r\n',
      'GET / HTTP/9.9\r\nHost: localhost\r\n\r\n',
      'GET /api/v0/health/public HTTP/1.1\r\nHost: localhost\r\nbad header: y\r\n\r\n',
      'POST /api/v0/customers HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'POST /api/v0/customers HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\nabc',
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    ]
    for (const request of malformed) {
      const res = await exchangeOne(request)
      expectClosingAnswer(res, 'HTTP/1.1 400 Bad Request', 'Malformed HTTP request')
      expect(res.headers['x-request-id'], request).toMatch(GENERATED_ID)
    }
  })

  it('the x-request-id is kept when its line was read before the error, not when it is cut off', async () => {
    const duplicateLength = ['POST /api/v0/taxes HTTP/1.1', 'Host: localhost', 'x-request-id: trace-400', 'Content-Length: 1', 'Content-Length: 2', '', 'ab'].join('\r\n')
    const kept = await exchangeOne(duplicateLength)
    expectClosingAnswer(kept, 'HTTP/1.1 400 Bad Request', 'Malformed HTTP request')
    expect(kept.headers['x-request-id']).toBe('trace-400')

    const insane = await exchangeOne(duplicateLength.replace('trace-400', 'two words'))
    expect(insane.headers['x-request-id']).toMatch(GENERATED_ID)

    // The header line itself overflowing the limit: never read whole.
    const cutOff = await exchangeOne(get('/api/v0/health/public', `x-request-id: ${'a'.repeat(20_000)}`))
    expect(cutOff.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large')
    expect(cutOff.headers['x-request-id']).toMatch(GENERATED_ID)
  })

  it('an error in the body of a request whose headers were read → 400 with that request\'s x-request-id', async () => {
    const badChunk = ['PUT /api/v0/taxes HTTP/1.1', 'Host: localhost', 'x-request-id: trace-chunk', 'Content-Type: application/json', 'Transfer-Encoding: chunked', '', 'zz', ''].join('\r\n')
    const res = await exchangeOne(badChunk)
    expectClosingAnswer(res, 'HTTP/1.1 400 Bad Request', 'Malformed HTTP request')
    expect(res.headers['x-request-id']).toBe('trace-chunk')
  })

  it('a malformed request after a good one on the same connection: the good one is answered, then the error', async () => {
    const responses = await exchange(['GET /api/v0/health/public HTTP/1.1', 'Host: localhost', '', 'GARBAGE', '', ''].join('\r\n'))
    expect(responses.map((res) => res.statusLine)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request'])
  })

  it('the server keeps answering afterwards', async () => {
    const res = await server.request('GET', '/api/v0/health/public')
    expect(res.status).toBe(200)
    const listed = await server.request('GET', '/api/v0/webhooks', { key })
    expect(listed.status).toBe(200)
  })
})

describe('while the server closes', () => {
  it('a request arriving on an open connection → 503 in the contract body with an x-request-id', async () => {
    const closing = await startTestServer()
    try {
      const socket = await openSocket(closing.baseUrl)
      const received = readUntilClosed(socket)
      // A request whose body is still on its way keeps its connection open when close() begins.
      socket.write(['PUT /api/v0/taxes HTTP/1.1', 'Host: localhost', 'Content-Type: application/json', 'Content-Length: 2', '', '{'].join('\r\n'))
      await sleep(100)
      const closed = closing.app.close()
      await sleep(100)
      socket.write('}' + ['GET /api/v0/health/public HTTP/1.1', 'Host: localhost', 'x-request-id: trace-closing', '', ''].join('\r\n'))
      const [first, second] = parseResponses(await received)
      await closed
      expect(first?.statusLine).toBe('HTTP/1.1 400 Bad Request') // the tax route's own answer, begun before closing
      expect(second?.statusLine).toBe('HTTP/1.1 503 Service Unavailable')
      expect(second?.body).toEqual({ statusCode: 503, error: 'Service Unavailable', message: 'The server is shutting down', details: 'Retry the request' })
      expect(second?.headers['x-request-id']).toBe('trace-closing')
      expect(second?.headers['retry-after']).toBe('1')
      expect(second?.headers.connection).toBe('close')
    } finally {
      await closing.database.drop()
    }
  })
})
