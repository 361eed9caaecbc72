import { request as httpRequest } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../helper.js'

/**
 * What makes /docs quick to load after the first request: the OpenAPI document and the reference
 * page rendered from it compressed and cached (validated by an ETag), and an icon at /favicon.ico.
 * The load time itself is measured by bench/docs-page.ts.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

/** A GET with these headers: status, headers and the body's raw bytes (fetch would decode them). */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.baseUrl}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('the OpenAPI document', () => {
  it('the same document at /api/v0/openapi.json and /docs/json, in brotli, gzip or as is, with one ETag that answers 304', async () => {
    const plain = await get('/api/v0/openapi.json')
    expect(plain.status).toBe(200)
    expect(plain.headers['content-encoding']).toBeUndefined()
    const document: unknown = JSON.parse(plain.body.toString('utf8'))
    for (const path of ['/api/v0/openapi.json', '/docs/json']) {
      const br = await get(path, { 'accept-encoding': 'gzip, deflate, br' })
      expect(br.headers['content-encoding'], path).toBe('br')
      expect(br.body.length, path).toBeLessThan(plain.body.length / 5)
      expect(JSON.parse(brotliDecompressSync(br.body).toString('utf8')), path).toEqual(document)
      const gzip = await get(path, { 'accept-encoding': 'gzip, br;q=0' })
      expect(gzip.headers['content-encoding'], path).toBe('gzip')
      expect(JSON.parse(gunzipSync(gzip.body).toString('utf8')), path).toEqual(document)
      expect(br.headers.etag, path).toBe(plain.headers.etag)
      expect(br.headers.vary, path).toBe('accept-encoding')
      const again = await get(path, { 'if-none-match': String(plain.headers.etag) })
      expect(again.status, path).toBe(304)
      expect(again.body.length, path).toBe(0)
    }
  })

  it("its description names the subject of every tag but the health check, as the docs page shows it first", async () => {
    const document = (await server.request<{ info: { description: string }; paths: Record<string, Record<string, { tags?: string[] }>> }>('GET', '/api/v0/openapi.json')).body
    const tags = new Set(Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.tags ?? [])))
    tags.delete('health')
    expect(tags.size).toBeGreaterThanOrEqual(15)
    for (const tag of tags) expect(document.info.description.toLowerCase(), tag).toContain(tag)
  })
})

describe("the docs page and its icon", () => {
  it('the page rendered once, in brotli, gzip or as is, with an ETag that answers 304', async () => {
    const plain = await get('/docs')
    expect(plain.status).toBe(200)
    expect(plain.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(plain.headers['cache-control']).toBe('no-cache')
    const br = await get('/docs', { 'accept-encoding': 'gzip, deflate, br' })
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.body.length).toBeLessThan(plain.body.length / 10)
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true)
    const gzip = await get('/docs', { 'accept-encoding': 'gzip' })
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true)
    expect(br.headers.etag).toBe(plain.headers.etag)
    expect(String(br.headers['content-security-policy'])).toContain("frame-ancestors 'none'")
    const again = await get('/docs', { 'if-none-match': String(plain.headers.etag) })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)
    // The same page at /docs/, as the previous reference answered.
    expect((await get('/docs/')).body.equals(plain.body)).toBe(true)
  })

  it('/favicon.ico is the icon the page links', async () => {
    const icon = await get('/favicon.ico')
    const linked = await get('/docs/favicon.svg')
    expect(icon.status).toBe(200)
    expect(icon.headers['content-type']).toBe('image/svg+xml')
    expect(icon.body.toString('utf8')).toBe(linked.body.toString('utf8'))
  })
})
