import type { CreatedWebhook as Webhook } from '../../../src/resources/webhooks/schemas.js'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'
import { TOTAL_EVENTS } from '../../../src/resources/webhooks/repository.js'


const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

async function createWebhook(body: Record<string, unknown> = {}): Promise<Webhook> {
  const res = await server.request<Webhook>('POST', '/api/v0/webhooks', { key, body: { name: 'orders', url: 'https://example.com/hooks', ...body } })
  expect(res.status).toBe(201)
  return res.body
}

const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`

describe('DELETE /api/v0/webhooks/{id} (the contract)', () => {
  it('200 with the deleted webhook, then it is gone for every route', async () => {
    const created = await createWebhook({ encrypted: true })
    const res = await server.request<Webhook>('DELETE', `/api/v0/webhooks/${created.id}`, { key, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      id: created.id,
      name: 'orders',
      url: 'https://example.com/hooks',
      isActive: true,
      encrypted: true,
      event_types: null,
      created_at: created.created_at,
      updated_at: created.updated_at,
      delivery_stats: { total_events: 1, successful_deliveries: 0, failed_deliveries: 0, last_delivery: null },
    })
    expect((await server.request('GET', `/api/v0/webhooks/${created.id}`, { key })).status).toBe(404)
    expect((await server.request('PATCH', `/api/v0/webhooks/${created.id}`, { key, body: { name: 'x' } })).status).toBe(404)
    const list = await server.request<Webhook[]>('GET', '/api/v0/webhooks?take=100', { key })
    expect(list.body.map((w) => w.id)).not.toContain(created.id)
    const again = await server.request('DELETE', `/api/v0/webhooks/${created.id}`, { key })
    expect(again.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
  })

  it('keeps the deleted row and its statistics stored for audit', async () => {
    const created = await createWebhook()
    await server.request('DELETE', `/api/v0/webhooks/${created.id}`, { key })
    const row = await server.app.db.selectFrom('webhooks').selectAll().select(TOTAL_EVENTS).where('id', '=', created.id).executeTakeFirstOrThrow()
    expect(row.deleted_at).toMatch(ISO_MS)
    expect(row.total_events).toBe(1)
  })

  it('400 Invalid webhook ID format for anything that is not a UUID', async () => {
    for (const id of ['abc', '123', `${MISSING_UUID}0`, MISSING_UUID.slice(1), MISSING_UUID.replace(/-/g, ''), 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', `urn:uuid:${MISSING_UUID}`]) {
      const res = await server.request('DELETE', `/api/v0/webhooks/${encodeURIComponent(id)}`, { key })
      expect(res.status, id).toBe(400)
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Invalid webhook ID format' })
    }
  })

  it('404 Webhook not found for a well-formed id that does not exist', async () => {
    const res = await server.request('DELETE', `/api/v0/webhooks/${MISSING_UUID}`, { key })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
  })

  it('accepts an upper-case UUID for the same webhook', async () => {
    const created = await createWebhook()
    const res = await server.request<Webhook>('DELETE', `/api/v0/webhooks/${created.id.toUpperCase()}`, { key })
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(created.id)
  })

  it('concurrent deletes of one webhook: exactly one 200, the rest 404', async () => {
    for (let round = 0; round < 5; round++) {
      const created = await createWebhook()
      const results = await Promise.all(Array.from({ length: 20 }, () => server.request('DELETE', `/api/v0/webhooks/${created.id}`, { key })))
      const statuses = results.map((r) => r.status).sort()
      expect(statuses.filter((s) => s === 200)).toHaveLength(1)
      expect(statuses.filter((s) => s === 404)).toHaveLength(19)
    }
  })
})

describe('POST /api/v0/webhooks', () => {
  it('201 with the webhook and a generated whsec_ signing secret shown once', async () => {
    const created = await createWebhook()
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'orders',
      url: 'https://example.com/hooks',
      isActive: true,
      encrypted: false,
      event_types: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
      // it is active, so its own webhook.created was queued for it
      delivery_stats: { total_events: 1, successful_deliveries: 0, failed_deliveries: 0, last_delivery: null },
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    })
    expect(Buffer.from((created.signing_secret ?? '').slice(6), 'base64')).toHaveLength(32)
    const fetched = await server.request<Webhook>('GET', `/api/v0/webhooks/${created.id}`, { key })
    expect(fetched.body).not.toHaveProperty('signing_secret')
    const listed = await server.request<Webhook[]>('GET', '/api/v0/webhooks', { key })
    expect(listed.text).not.toContain(created.signing_secret)
  })

  it('stores a supplied signing secret without echoing it', async () => {
    const secret = secretOf(32)
    const created = await createWebhook({ signing_secret: secret, isActive: false, encrypted: true })
    expect(created).not.toHaveProperty('signing_secret')
    expect(created.isActive).toBe(false)
    expect(created.encrypted).toBe(true)
    const row = await server.app.db.selectFrom('webhooks').select('signing_secret').where('id', '=', created.id).executeTakeFirstOrThrow()
    expect(row.signing_secret).toBe(secret)
  })

  const invalid: [string, Record<string, unknown>, string][] = [
    ['name empty', { name: '' }, 'name should not be empty'],
    ['name 101 characters', { name: 'n'.repeat(101) }, 'name must be shorter than or equal to 100 characters'],
    ['name missing', { name: undefined }, 'name is required'],
    ['url missing', { url: undefined }, 'url is required'],
    ['url not a URL', { url: 'not a url' }, 'url must be a valid absolute URL'],
    ['url http to a public host', { url: 'http://example.com/h' }, 'url must use https'],
    ['url ftp', { url: 'ftp://example.com/h' }, 'url must use https'],
    ['url with credentials', { url: 'https://user:pw@example.com/h' }, 'url must not contain credentials'],
    ['url longer than 2048', { url: `https://example.com/${'a'.repeat(2029)}` }, 'url must be shorter than or equal to 2048 characters'],
    ['isActive as a string', { isActive: 'true' }, 'isActive must be a boolean value'],
    ['encrypted as a number', { encrypted: 1 }, 'encrypted must be a boolean value'],
    ['signing_secret without prefix', { signing_secret: randomBytes(32).toString('base64') }, 'signing_secret must be whsec_'],
    ['signing_secret of 23 bytes', { signing_secret: secretOf(23) }, 'signing_secret must be whsec_'],
    ['signing_secret of 65 bytes', { signing_secret: secretOf(65) }, 'signing_secret must be whsec_'],
    ['camelCase signingSecret is not the field', { signingSecret: secretOf(32) }, 'property signingSecret should not exist'],
    ['unknown field', { foo: 1 }, 'property foo should not exist'],
  ]
  it.each(invalid)('400 for %s, and nothing is created', async (_name, patch, message) => {
    const before = await server.request<Webhook[]>('GET', '/api/v0/webhooks?take=100', { key })
    const body: Record<string, unknown> = { name: 'orders', url: 'https://example.com/hooks', ...patch }
    for (const field of Object.keys(patch)) if (patch[field] === undefined) delete body[field]
    const res = await server.request<{ message: string }>('POST', '/api/v0/webhooks', { key, body })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(message)
    const after = await server.request<Webhook[]>('GET', '/api/v0/webhooks?take=100', { key })
    expect(after.body.length).toBe(before.body.length)
  })

  it('accepts the valid side of each boundary', async () => {
    await createWebhook({ name: 'n' })
    await createWebhook({ name: 'n'.repeat(100) })
    await createWebhook({ url: `https://example.com/${'a'.repeat(2028)}` })
    await createWebhook({ url: 'http://localhost:8080/h' })
    await createWebhook({ url: 'http://127.0.0.1:8080/h' })
    await createWebhook({ url: 'http://[::1]:8080/h' })
    await createWebhook({ signing_secret: secretOf(24) })
    await createWebhook({ signing_secret: secretOf(64) })
  })

  it('reports every failure at once', async () => {
    const res = await server.request<{ message: string }>('POST', '/api/v0/webhooks', { key, body: { name: '', url: 'http://example.com', isActive: 'yes', x: 1 } })
    expect(res.status).toBe(400)
    for (const part of ['name should not be empty', 'url must use https', 'isActive must be a boolean value', 'property x should not exist']) {
      expect(res.body.message).toContain(part)
    }
  })
})

describe('webhook urls in production', () => {
  it('refuses http even to a loopback host', async () => {
    // A fixed public answer: production checks where the host resolves (no DNS in tests).
    const production = await startTestServer({ config: { nodeEnv: 'production' }, delivery: { resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] } })
    try {
      const prodKey = await production.createKey()
      const http = await production.request<{ message: string }>('POST', '/api/v0/webhooks', { key: prodKey, body: { name: 'w', url: 'http://localhost:8080/h' } })
      expect(http.status).toBe(400)
      expect(http.body.message).toBe('url must use https')
      const https = await production.request('POST', '/api/v0/webhooks', { key: prodKey, body: { name: 'w', url: 'https://example.com/h' } })
      expect(https.status).toBe(201)
    } finally {
      await production.close()
    }
  })
})

describe('GET and PATCH /api/v0/webhooks', () => {
  it('lists with skip and take, newest first', async () => {
    const own = await server.createKey()
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await server.request<Webhook>('POST', '/api/v0/webhooks', { key: own, body: { name: `w${i}`, url: 'https://example.com/h' } })
      ids.push(res.body.id)
    }
    const all = await server.request<Webhook[]>('GET', '/api/v0/webhooks', { key: own })
    expect(all.body.map((w) => w.name)).toEqual(['w2', 'w1', 'w0'])
    const page = await server.request<Webhook[]>('GET', '/api/v0/webhooks?skip=1&take=1', { key: own })
    expect(page.body.map((w) => w.name)).toEqual(['w1'])
    for (const [query, ok] of [['take=1', true], ['take=100', true], ['take=0', false], ['take=101', false], ['skip=0', true], ['skip=-1', false], ['take=abc', false], ['skip=2147483647', true], ['skip=2147483648', false], ['skip=100000000000000000000', false]] as const) {
      const res = await server.request('GET', `/api/v0/webhooks?${query}`, { key: own })
      expect(res.status, query).toBe(ok ? 200 : 400)
    }
  })

  it('GET one: 200, 400 for a bad id, 404 for a missing one', async () => {
    const created = await createWebhook()
    const res = await server.request<Webhook>('GET', `/api/v0/webhooks/${created.id}`, { key })
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(created.id)
    expect((await server.request('GET', '/api/v0/webhooks/abc', { key })).body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Invalid webhook ID format' })
    expect((await server.request('GET', `/api/v0/webhooks/${MISSING_UUID}`, { key })).body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
  })

  it('PATCH changes only the given fields and moves updated_at', async () => {
    const created = await createWebhook()
    await new Promise((resolve) => setTimeout(resolve, 5))
    const res = await server.request<Webhook>('PATCH', `/api/v0/webhooks/${created.id}`, { key, body: { isActive: false, name: 'renamed' } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...created, signing_secret: undefined, isActive: false, name: 'renamed', updated_at: expect.stringMatching(ISO_MS) })
    expect(res.body.updated_at > created.updated_at).toBe(true)
    const bad = await server.request<{ message: string }>('PATCH', `/api/v0/webhooks/${created.id}`, { key, body: { url: 'http://example.com' } })
    expect(bad.status).toBe(400)
    const after = await server.request<Webhook>('GET', `/api/v0/webhooks/${created.id}`, { key })
    expect(after.body.url).toBe(created.url)
  })
})

describe('an update that names no field', () => {
  it('changes nothing, not even updated_at', async () => {
    const created = await createWebhook()
    await new Promise((resolve) => setTimeout(resolve, 5))
    const res = await server.request<Webhook>('PATCH', `/api/v0/webhooks/${created.id}`, { key, body: {} })
    expect(res.status).toBe(200)
    const { signing_secret: _secret, ...stored } = created
    expect(res.body).toEqual(stored)
    expect((await server.request('PATCH', `/api/v0/webhooks/${MISSING_UUID}`, { key, body: {} })).status).toBe(404)
  })
})
