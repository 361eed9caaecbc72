// vitest: sqlite project only — the built server runs on SQLite whatever the run.
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServerProcess, type ServerProcess } from '../../helpers/server-process.js'
import { cleanUp, freshDb, tempDir } from '../../processes.js'
import { BOUNDARY, image, MB5, MULTIPART, type Product, storedFiles } from './fixtures.js'

/**
 * A 10 × 5 MB upload streams: the server writes each file part to the store as it arrives, so its
 * process never holds the 50 MB it receives. Measured on the built server as a process of its own
 * (nothing of the test runner counted): its peak RSS (VmHWM) before and after the upload. The body
 * is made while it is sent, 64 KiB at a time, and piped, so the client too sends only as fast as
 * the server reads.
 */

const CHUNK = 64 * 1024
const FILES = 10

let server: ServerProcess
let headers: Record<string, string>
let directory: string

beforeAll(async () => {
  directory = tempDir('devplatform-upload-memory-')
  server = await startServerProcess({ DATABASE_URL: freshDb('devplatform-upload-memory-db-').url, PRODUCT_IMAGES_DIR: directory, LOG_LEVEL: 'info' }, { expectDevKey: true })
  headers = { ...server.devKey }
})
afterAll(() => cleanUp())

/** The server process's peak resident memory so far, in MB (Linux: VmHWM). */
function peakRssMb(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) / 1024
}

/** The multipart body of a product with `files` images of `size` bytes each, made while it is read. */
function* streamedBody(files: number, size: number): Generator<Buffer> {
  const head = image('png', Math.min(CHUNK, size), 1)
  const filler = Buffer.alloc(CHUNK, 2)
  yield Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nBig\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="price"\r\n\r\n1\r\n`)
  for (let file = 0; file < files; file++) {
    yield Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="images"; filename="${file}.png"\r\nContent-Type: image/png\r\n\r\n`)
    for (let offset = 0; offset < size; offset += CHUNK) yield offset === 0 ? head : filler.subarray(0, Math.min(CHUNK, size - offset))
    yield Buffer.from('\r\n')
  }
  yield Buffer.from(`--${BOUNDARY}--\r\n`)
}

async function upload(files: number, size: number): Promise<{ status: number; product: Product }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL('/api/v0/products', server.baseUrl), { method: 'POST', headers: { ...headers, 'content-type': MULTIPART } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, product: JSON.parse(Buffer.concat(chunks).toString()) as Product }))
      response.on('error', reject)
    })
    request.on('error', reject)
    pipeline(Readable.from(streamedBody(files, size)), request).catch(reject)
  })
}

describe('a 10 × 5 MB multipart upload', () => {
  it("is stored whole while the server's peak RSS grows by less than the 50 MB it received, and not again for a second one", async () => {
    // One small upload first, so what is loaded and compiled once is in the baseline.
    expect((await upload(1, CHUNK)).status).toBe(201)
    const before = peakRssMb(server.pid)
    const first = await upload(FILES, MB5)
    const afterFirst = peakRssMb(server.pid)
    const second = await upload(FILES, MB5)
    const afterSecond = peakRssMb(server.pid)
    for (const { status, product } of [first, second]) {
      expect(status).toBe(201)
      expect(product.images).toHaveLength(FILES)
    }
    expect(storedFiles(directory)).toHaveLength(2 * FILES + 1)
    const signed = (mb: number) => `${mb < 0 ? '' : '+'}${mb.toFixed(1)} MB`
    process.stdout.write(`10 × 5 MB uploads: the server's peak RSS ${before.toFixed(1)} MB before, ${signed(afterFirst - before)} after the first, ${signed(afterSecond - afterFirst)} more after the second\n`)
    // What the growth is: chunks already written and not yet collected (V8 collects them in
    // batches), never the body: a second upload of the same size adds next to nothing.
    expect(afterFirst - before).toBeLessThan(50)
    expect(afterSecond - afterFirst).toBeLessThan(10)
  })
})
