import { readFileSync } from 'node:fs'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryRateLimiter } from '../../src/auth/rate-limiter.js'
import { SCOPES } from '../../src/resources/index.js'
import { TEST_BACKEND } from '../backend.js'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../helper.js'

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer({ rateLimiter: new MemoryRateLimiter() })
  key = await server.createKey()
})
afterAll(async () => server.close())

const deleteWebhook = (id: string, k: TestKey | null, headers?: Record<string, string>) =>
  server.request('DELETE', `/api/v0/webhooks/${id}`, { key: k, ...(headers ? { headers } : {}) })

describe('the order of checks (issue section 3)', () => {
  it('1. missing headers win over everything after them (bad id, bad body)', async () => {
    const res = await server.request('POST', '/api/v0/webhooks', { body: '{not json', headers: { 'x-client-key': key.clientKey } })
    expect(res.status).toBe(401)
    expect((res.body as { message: string }).message).toBe('Client key or secret missing')
    expect((await deleteWebhook('not-a-uuid', null)).status).toBe(401)
  })

  it('2. a wrong secret is 401 even for a deactivated key (the key state is not revealed)', async () => {
    const inactive = await server.createKey()
    await server.deactivate(inactive)
    const res = await deleteWebhook(MISSING_UUID, null, { 'x-client-key': inactive.clientKey, 'x-client-secret': 'sk_live_wrong' })
    expect(res.status).toBe(401)
    expect((res.body as { message: string }).message).toBe('Invalid client app credentials')
  })

  it('3. an inactive key is 403 before the rate limit is looked at', async () => {
    const limited = await server.createKey({ rateLimit: 1 })
    expect((await deleteWebhook(MISSING_UUID, limited)).status).toBe(404)
    expect((await deleteWebhook(MISSING_UUID, limited)).status).toBe(429)
    await server.deactivate(limited)
    const res = await deleteWebhook(MISSING_UUID, limited)
    expect(res.status).toBe(403)
    expect((res.body as { message: string }).message).toBe('API key is inactive')
  })

  it('4. the rate limit comes before the scope check', async () => {
    const limited = await server.createKey({ rateLimit: 1, scopes: ['webhook:read'] })
    expect((await deleteWebhook(MISSING_UUID, limited)).status).toBe(403)
    expect((await deleteWebhook(MISSING_UUID, limited)).status).toBe(429)
  })

  it('5. the scope check comes before validation', async () => {
    const readOnly = await server.createKey({ scopes: ['webhook:read'] })
    const res = await deleteWebhook('not-a-uuid', readOnly)
    expect(res.status).toBe(403)
    expect((res.body as { message: string }).message).toBe('Missing required scope')
  })

  it('6. validation (400) comes before existence (404)', async () => {
    expect((await deleteWebhook('not-a-uuid', key)).status).toBe(400)
    expect((await deleteWebhook(MISSING_UUID, key)).status).toBe(404)
  })

  it('every authenticated response carries the rate-limit headers, errors included', async () => {
    for (const res of [await deleteWebhook('not-a-uuid', key), await deleteWebhook(MISSING_UUID, key)]) {
      expect(res.headers.get('ratelimit-policy')).toMatch(/^"hour";q=\d+;w=3600$/)
      expect(res.headers.get('ratelimit')).toMatch(/^"hour";r=\d+;t=\d+$/)
    }
  })
})

describe('keys', () => {
  it('a deactivation takes effect on the next request', async () => {
    const fresh = await server.createKey()
    expect((await server.request('GET', '/api/v0/webhooks', { key: fresh })).status).toBe(200)
    await server.deactivate(fresh)
    expect((await server.request('GET', '/api/v0/webhooks', { key: fresh })).status).toBe(403)
  })

  it('client keys and secrets carry recognisable prefixes and at least 128 random bits', async () => {
    const live = await server.createKey({ environment: 'production' })
    const test = await server.createKey({ environment: 'development' })
    expect(live.clientKey).toMatch(/^pk_live_[A-Za-z0-9_-]{32}$/)
    expect(live.clientSecret).toMatch(/^sk_live_[A-Za-z0-9_-]{32}$/)
    expect(test.clientKey).toMatch(/^pk_test_[A-Za-z0-9_-]{32}$/)
    expect(test.clientSecret).toMatch(/^sk_test_[A-Za-z0-9_-]{32}$/)
    expect(live.clientSecret).not.toBe(test.clientSecret)
  })

  it('secrets are stored only as SHA-256 digests', async () => {
    const fresh = await server.createKey()
    const row = await server.app.db.selectFrom('api_keys').selectAll().where('id', '=', fresh.id).executeTakeFirstOrThrow()
    const { createHash } = await import('node:crypto')
    expect(row.secret_digest).toBe(createHash('sha256').update(fresh.clientSecret).digest('hex'))
    expect(JSON.stringify(row)).not.toContain(fresh.clientSecret)
    if (TEST_BACKEND === 'sqlite') {
      // Every byte of the database file, after the WAL was folded in.
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(server.app.db)
      expect(readFileSync(server.database.url.slice('sqlite:'.length)).includes(fresh.clientSecret)).toBe(false)
    } else {
      // Every row of every table, as text.
      const tables = await server.database.query<{ name: string }>("select tablename as name from pg_tables where schemaname = 'public'")
      for (const { name } of tables) {
        const rows = await server.database.query<{ dump: string | null }>(`select string_agg(t::text, '') as dump from ${name} t`)
        expect(rows[0]?.dump ?? '').not.toContain(fresh.clientSecret)
      }
    }
  })

  it('no secret ever reaches a log line', async () => {
    const fresh = await server.createKey({ scopes: SCOPES })
    await server.request('GET', '/api/v0/webhooks', { key: fresh })
    await server.request('GET', '/api/v0/webhooks/nope', { key: fresh })
    await server.request('GET', '/api/v0/webhooks', { headers: { 'x-client-key': fresh.clientKey, 'x-client-secret': `${fresh.clientSecret}x` } })
    const created = await server.request<{ signing_secret: string }>('POST', '/api/v0/webhooks', { key: fresh, body: { name: 'w', url: 'https://example.com/h' } })
    expect(created.status).toBe(201)
    const logs = server.logs()
    expect(logs).toContain('"url":"/api/v0/webhooks"') // requests are logged...
    expect(logs).not.toContain(fresh.clientSecret) // ...but never their secrets
    expect(logs).not.toContain(created.body.signing_secret)
  })
})
