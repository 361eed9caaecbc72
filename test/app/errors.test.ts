import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { OPERATIONS } from '../../src/resources/index.js'

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

describe('errors in the contract body', () => {
  it('malformed JSON → 400', async () => {
    const res = await server.request('POST', '/api/v0/customers', { key, body: '{"first_name": ' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Request body is not valid JSON' })
  })

  it('prototype poisoning in JSON → 400, not parsed', async () => {
    const res = await server.request('POST', '/api/v0/customers', { key, body: '{"__proto__": {"admin": true}, "first_name": "a"}' })
    expect(res.status).toBe(400)
  })

  it('wrong content type → 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await server.request('POST', '/api/v0/customers', { key, body: 'a=b', headers: { 'content-type': type } })
      expect(res.status, type).toBe(415)
      expect(res.body).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: 'Unsupported Media Type: send application/json' })
    }
  })

  it('a body without Content-Type → 415, without Fastify\'s code', async () => {
    const res = await fetch(`${server.baseUrl}/api/v0/customers`, { method: 'POST', headers: key.headers, body: new Uint8Array([123, 125]) })
    expect(res.status).toBe(415)
    expect(await res.json()).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: 'Unsupported Media Type: send application/json' })
  })

  it('application/json with a charset is accepted', async () => {
    const res = await server.request('POST', '/api/v0/taxes', { key, body: JSON.stringify({ name: 't', percentage: 1 }), headers: { 'content-type': 'application/json; charset=utf-8' } })
    expect(res.status).toBe(201)
  })

  it('body over 1 MiB → 413; exactly 1 MiB is read', async () => {
    const oneMiB = 1024 * 1024
    const wrap = (size: number) => `{"name":"${'a'.repeat(size - 11)}"}` // 11 bytes of JSON around the string
    expect(wrap(oneMiB).length).toBe(oneMiB)
    const over = await server.request('POST', '/api/v0/taxes', { key, body: wrap(oneMiB + 1) })
    expect(over.status).toBe(413)
    expect(over.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'Request body is larger than 1 MiB' })
    const at = await server.request<{ statusCode: number }>('POST', '/api/v0/taxes', { key, body: wrap(oneMiB) })
    expect(at.status).toBe(400) // read and validated (name too long, percentage missing), not refused for size
  })

  it('an empty JSON body on a body-less route is fine (generated clients send Content-Type on DELETE)', async () => {
    const res = await server.request('GET', '/api/v0/webhooks', { key, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(200)
  })

  it('an empty or non-object body where one is required → 400', async () => {
    const empty = await server.request<{ message: string }>('POST', '/api/v0/taxes', { key, headers: { 'content-type': 'application/json' } })
    expect(empty.status).toBe(400)
    expect(empty.body.message).toBe('Request body must be a JSON object')
    for (const body of ['[]', '"x"', '1', 'null']) {
      const res = await server.request('POST', '/api/v0/taxes', { key, body })
      expect(res.status, body).toBe(400)
    }
  })

  it('unknown route → 404 Cannot METHOD /path', async () => {
    const res = await server.request('GET', '/api/v0/whatever?x=1')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Cannot GET /api/v0/whatever' })
    const patch = await server.request('PATCH', '/api/v0/taxes', { key })
    expect(patch.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Cannot PATCH /api/v0/taxes' })
  })

  it('every response carries x-request-id; a sane caller id is kept', async () => {
    const responses = [
      await server.request('GET', '/api/v0/health/public'),
      await server.request('GET', '/api/v0/nope'),
      await server.request('GET', '/api/v0/webhooks'),
      await server.request('PUT', '/api/v0/taxes'),
    ]
    for (const res of responses) expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const kept = await server.request('GET', '/api/v0/health/public', { headers: { 'x-request-id': 'trace-123' } })
    expect(kept.headers.get('x-request-id')).toBe('trace-123')
    const replaced = await server.request('GET', '/api/v0/health/public', { headers: { 'x-request-id': 'bad id with spaces' } })
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('unexpected errors', () => {
  it('→ 500 Internal server error with no internals, logged with the request id', async () => {
    const broken = await startTestServer()
    try {
      const brokenKey = await broken.createKey()
      // Drop a table under the running app: the next query fails inside the handler.
      await broken.app.db.schema.dropTable('taxes').execute()
      const res = await broken.request('GET', '/api/v0/taxes', { key: brokenKey })
      expect(res.status).toBe(500)
      expect(res.body).toEqual({ statusCode: 500, error: 'Internal Server Error', message: 'Internal server error' })
      expect(res.text).not.toContain('taxes')
      const requestId = res.headers.get('x-request-id') ?? ''
      const line = broken
        .logs()
        .split('\n')
        .find((l) => l.includes('unhandled error'))
      expect(line).toBeDefined()
      expect(line).toContain(`"reqId":"${requestId}"`)
      // SQLite's words, or PostgreSQL's
      expect(line).toMatch(/no such table: taxes|relation \\"taxes\\" does not exist/)
    } finally {
      await broken.close()
    }
  })
})

describe('API document', () => {
  it('serves OpenAPI 3.1 built from the route schemas at /api/v0/openapi.json', async () => {
    const res = await server.request<{
      openapi: string
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> }; security?: unknown[] }>>
    }>('GET', '/api/v0/openapi.json')
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe('3.1.0')
    const paths = res.body.paths
    // Every operation of the manifests, and nothing else, in OpenAPI's path syntax.
    const declared = new Set([...OPERATIONS.keys()].map((key) => key.slice(key.indexOf(' ') + 1).replace(/:(\w+)/g, '{$1}')))
    expect(Object.keys(paths).sort()).toEqual([...declared].sort())
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/api/v0/health/public', '/api/v0/webhooks/{id}/deliveries/{deliveryId}/retry', '/api/v0/customers/{customerId}/liquidation_addresses/{liquidationAddressId}']))
    expect(Object.keys(paths['/api/v0/webhooks/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'patch'])
    const create = paths['/api/v0/customers/{customerId}/liquidation_addresses']?.post
    const fields = Object.keys(create?.requestBody?.content['application/json']?.schema.properties ?? {})
    expect(fields).toContain('custom_developer_fee_percent')
    expect(fields).toContain('destination_sepa_reference')
    expect(paths['/api/v0/health/public']?.get?.security).toEqual([])
  })

  it('serves a reference at /docs', async () => {
    const res = await fetch(`${server.baseUrl}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await res.text()).toContain('<title>devplatform API reference</title>')
  })
})
