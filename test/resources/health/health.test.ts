import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { VERSION } from '../../../src/version.js'
import { startTestServer, type TestKey, type TestServer } from '../../helper.js'

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

/** A timestamp the published client parses into a valid Date, taken within the request. */
function expectTimestampBetween(value: unknown, before: number, after: number): void {
  expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  const ms = new Date(String(value)).getTime()
  expect(Number.isNaN(ms)).toBe(false)
  expect(ms).toBeGreaterThanOrEqual(before - 1)
  expect(ms).toBeLessThanOrEqual(after + 1)
}

describe('health, in the published client\'s shapes', () => {
  it('GET /api/v0/health/public answers {status, timestamp, version} without credentials', async () => {
    const before = Date.now()
    const res = await server.request<Record<string, unknown>>('GET', '/api/v0/health/public')
    const after = Date.now()
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['status', 'timestamp', 'version'])
    expect(res.body.status).toBe('ok')
    expect(res.body.version).toBe(VERSION)
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/)
    expectTimestampBetween(res.body.timestamp, before, after)
    expect(res.headers.get('ratelimit')).toBeNull()
  })

  it('GET /api/v0/health needs credentials and answers the authenticated model', async () => {
    expect((await server.request('GET', '/api/v0/health')).status).toBe(401)
    const before = Date.now()
    const res = await server.request<Record<string, unknown>>('GET', '/api/v0/health', { key })
    const after = Date.now()
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      status: 'ok',
      timestamp: expect.any(String),
      version: VERSION,
      database: 'connected',
      message: 'Service is up and running',
      authenticated: true,
    })
    expectTimestampBetween(res.body.timestamp, before, after)
  })

  it('the version is the package\'s', async () => {
    const { readFile } = await import('node:fs/promises')
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
    expect(VERSION).toBe(pkg.version)
  })
})

// The 503 in the health shape while the database is unreachable: test/multi-instance/limits-and-races.test.ts
// cuts a real PostgreSQL connection (SQLite in WAL mode never refuses a read to another process).
