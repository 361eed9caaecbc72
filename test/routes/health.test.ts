import { TEST_BACKEND } from '../backend.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

describe('health', () => {
  it('GET /api/v0/health/public answers without credentials', async () => {
    const res = await server.request('GET', '/api/v0/health/public')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok' })
    expect(res.headers.get('ratelimit')).toBeNull()
  })

  it('GET /api/v0/health needs credentials and reports the database', async () => {
    expect((await server.request('GET', '/api/v0/health')).status).toBe(401)
    const res = await server.request('GET', '/api/v0/health', { key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', database: 'ok', redis: TEST_BACKEND === 'postgres' ? 'ok' : 'not configured' })
  })
})
