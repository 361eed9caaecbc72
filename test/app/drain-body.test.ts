// vitest: sqlite project only — a pure function, no backend.
import { createServer, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DrainLimits, type DrainOutcome, drainBody } from '../../src/http/drain-body.js'

/**
 * drainBody on a bare Node server, with small limits: a refused body is read to its end within
 * the limits, and cut at either of them (bytes, time); a client that hangs up is noticed.
 */

let server: Server
let port: number
let limits: DrainLimits = { maxBytes: 1024 * 1024, maxMs: 10_000 }
const outcomes: DrainOutcome[] = []
const waiting: Array<(outcome: DrainOutcome) => void> = []
const arriving: Array<() => void> = []

beforeAll(async () => {
  server = createServer((request, response) => {
    arriving.shift()?.()
    void drainBody(request, limits).then((outcome) => {
      outcomes.push(outcome)
      waiting.shift()?.(outcome)
      response.writeHead(413, { connection: 'close', 'content-type': 'text/plain', 'content-length': outcome.length }).end(outcome)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  port = address.port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

function nextOutcome(): Promise<DrainOutcome> {
  return new Promise((resolve) => waiting.push(resolve))
}

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Everything the server sends until the connection closes. */
function readUntilClosed(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
    socket.on('error', () => undefined)
    socket.on('close', () => resolve(text))
  })
}

/** Writes chunks of a chunked body every `everyMs` until the connection closes. */
function writeChunksUntilClosed(socket: Socket, size: number, everyMs: number): void {
  const chunk = Buffer.from(`${size.toString(16)}\r\n${'a'.repeat(size)}\r\n`)
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) clearInterval(timer)
    else socket.write(chunk)
  }, everyMs)
  socket.on('close', () => clearInterval(timer))
}

describe('drainBody', () => {
  it('reads a body to its end within the limits → read, and the answer follows', async () => {
    limits = { maxBytes: 64 * 1024, maxMs: 10_000 }
    const socket = await openSocket()
    const answer = readUntilClosed(socket)
    const outcome = nextOutcome()
    const body = 'a'.repeat(60 * 1024)
    socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
    expect(await outcome).toBe('read')
    expect(await answer).toMatch(/^HTTP\/1\.1 413 [^]*\r\n\r\nread$/)
  })

  it('a body past the byte limit → cut', async () => {
    limits = { maxBytes: 64 * 1024, maxMs: 10_000 }
    const socket = await openSocket()
    const closed = readUntilClosed(socket)
    const outcome = nextOutcome()
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')
    writeChunksUntilClosed(socket, 16 * 1024, 1)
    expect(await outcome).toBe('cut')
    await closed
  })

  it('a body declared longer than the byte limit → cut, without waiting for it', async () => {
    limits = { maxBytes: 64 * 1024, maxMs: 10_000 }
    const socket = await openSocket()
    const answer = readUntilClosed(socket)
    const outcome = nextOutcome()
    socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${64 * 1024 + 1}\r\n\r\n`)
    expect(await outcome).toBe('cut')
    expect(await answer).toMatch(/\r\n\r\ncut$/)
  })

  it('a body still trickling in at the time limit → cut', async () => {
    limits = { maxBytes: 64 * 1024 * 1024, maxMs: 200 }
    const socket = await openSocket()
    const closed = readUntilClosed(socket)
    const outcome = nextOutcome()
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')
    writeChunksUntilClosed(socket, 10, 20)
    expect(await outcome).toBe('cut')
    await closed
  })

  it('a client that hangs up mid-body → gone', async () => {
    limits = { maxBytes: 64 * 1024, maxMs: 10_000 }
    const socket = await openSocket()
    const outcome = nextOutcome()
    const arrived = new Promise<void>((resolve) => arriving.push(resolve))
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc')
    await arrived
    socket.destroy()
    expect(await outcome).toBe('gone')
  })
})
