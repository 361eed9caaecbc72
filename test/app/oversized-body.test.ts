import { execFile } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DRAIN_MAX_BYTES } from '../../src/http/drain-body.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * A body over the 1 MiB limit gets its 413, and the client reads it: the server reads (and drops)
 * the rest of the body, up to DRAIN_MAX_BYTES, before answering and closing, so the close cannot
 * reset the connection while the client is still writing. A body still arriving past that bound
 * is cut off: the server never reads an endless body.
 */

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

const TOO_LARGE = { statusCode: 413, error: 'Payload Too Large', message: 'Request body is larger than 1 MiB' }
const MiB = 1024 * 1024
const TIMES = 20

interface Outcome {
  status?: number
  body?: unknown
  /** fetch's failure, with its cause's code (EPIPE, ECONNRESET) */
  error?: string
}

/**
 * POSTs `times` bodies of `size` bytes with fetch from another process. In the test's own process
 * the failure cannot happen: the client's writes are all queued before the server's code runs.
 */
function fetchFromAnotherProcess(mode: 'content-length' | 'chunked', size: number, times: number): Promise<Outcome[]> {
  const script = `
    const [url, headersJson, mode, size, times] = process.argv.slice(1)
    const headers = JSON.parse(headersJson)
    const bytes = Buffer.from('{"name":"' + 'a'.repeat(Number(size) - 12) + '"}')
    const outcomes = []
    for (let i = 0; i < Number(times); i++) {
      // Chunked: a stream of unknown length, which fetch sends with Transfer-Encoding: chunked.
      const body = mode === 'content-length' ? bytes : new ReadableStream({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 65536) controller.enqueue(bytes.subarray(at, at + 65536))
          controller.close()
        },
      })
      try {
        const res = await fetch(url, { method: 'POST', headers, body, duplex: 'half' })
        outcomes.push({ status: res.status, body: await res.json() })
      } catch (error) {
        outcomes.push({ error: String(error) + ' ' + String(error.cause?.code ?? error.cause) })
      }
    }
    process.stdout.write(JSON.stringify(outcomes))
  `
  const headers = JSON.stringify({ ...key.headers, 'content-type': 'application/json' })
  const args = ['--input-type=module', '-e', script, `${server.baseUrl}/api/v0/taxes`, headers, mode, String(size), String(times)]
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 10 * MiB }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout) as Outcome[])
    })
  })
}

function openSocket(): Promise<Socket> {
  const { hostname, port } = new URL(server.baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket))
    socket.once('error', reject)
  })
}

function requestHead(framing: string): string {
  const headers = Object.entries(key.headers).map(([name, value]) => `${name}: ${value}\r\n`)
  return `POST /api/v0/taxes HTTP/1.1\r\nHost: localhost\r\n${headers.join('')}Content-Type: application/json\r\n${framing}\r\n\r\n`
}

describe('a body over 1 MiB → 413, read by the client every time', () => {
  for (const mode of ['content-length', 'chunked'] as const) {
    for (const size of [2 * MiB, 8 * MiB]) {
      it(`${mode}, ${size / MiB} MiB, ${TIMES} times from another process`, async () => {
        const outcomes = await fetchFromAnotherProcess(mode, size, TIMES)
        expect(outcomes).toHaveLength(TIMES)
        for (const outcome of outcomes) expect(outcome).toEqual({ status: 413, body: TOO_LARGE })
      })
    }
  }

  it('a body declared longer than the drain bound is answered at once, without reading it, and its connection closed', async () => {
    const socket = await openSocket()
    const received: Buffer[] = []
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => undefined)
    // Only the head: an answer that waited for the body would never come.
    socket.write(requestHead(`Content-Length: ${DRAIN_MAX_BYTES + 2 * MiB}`))
    await closed
    const text = Buffer.concat(received).toString('utf8')
    expect(text.startsWith('HTTP/1.1 413 Payload Too Large\r\n')).toBe(true)
    expect(text.toLowerCase()).toContain('\r\nconnection: close\r\n')
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual(TOO_LARGE)
  })

  it('an endless chunked body is cut once the drain bound is passed', async () => {
    const socket = await openSocket()
    let closed = false
    const close = () => {
      closed = true
    }
    socket.on('close', close)
    socket.on('end', close)
    socket.on('error', close)
    socket.write(requestHead('Transfer-Encoding: chunked'))
    const piece = 'a'.repeat(64 * 1024)
    const chunk = Buffer.from(`${piece.length.toString(16)}\r\n${piece}\r\n`)
    // Far past the bound, with the kernel's buffers on both sides: a server that read on would take it all.
    const cap = 4 * DRAIN_MAX_BYTES
    let written = 0
    while (!closed && written < cap) {
      if (!socket.write(chunk)) {
        await new Promise<void>((resolve) => {
          socket.once('drain', resolve)
          socket.once('close', resolve)
        })
      }
      written += piece.length
    }
    socket.destroy()
    expect(closed).toBe(true)
    expect(written).toBeLessThan(cap)
    expect(written).toBeGreaterThan(DRAIN_MAX_BYTES)
  })
})
