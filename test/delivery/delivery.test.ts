import type { CreatedWebhook as Webhook } from '../../src/resources/webhooks/schemas.js'
import { TEST_BACKEND } from '../backend.js'
import { spawn } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { fileURLToPath } from 'node:url'
import { compactDecrypt, decodeProtectedHeader } from 'jose'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Answer, type Receiver, startReceiver } from '../receiver.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { waitUntil } from '../processes.js'
import { INLINE_FANOUT_MAX } from '../../src/events/events-repository.js'
import { TOTAL_EVENTS } from '../../src/resources/webhooks/repository.js'


interface Envelope {
  id: string
  type: string
  created_at: string
  data: Record<string, unknown>
}

const RACE_RECEIVER = fileURLToPath(new URL('../fixtures/race-receiver.mjs', import.meta.url))

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

/**
 * The race test's fence, on a connection of its own: the receiver accepts connections in
 * arrival order, so a request whose connection came first is read first (a kept-alive fence
 * connection would be read one loop turn ahead of connections still waiting to be accepted).
 */
function sendFence(port: number, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: `/__fence${path}`, method: 'POST', agent: false }, (response) => {
      response.resume()
      response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`fence: ${response.statusCode}`))))
    })
    request.on('error', reject)
    request.end()
  })
}

/** A server that delivers, with a short timeout and (unless given) the default retry schedule. */
async function deliveringServer(options: { retrySchedule?: number[]; timeoutMs?: number } = {}): Promise<TestServer> {
  return startTestServer({
    webhooks: { dispatcher: true, timeoutMs: options.timeoutMs ?? 1000, pollIntervalMs: 20 },
    ...(options.retrySchedule === undefined ? {} : { delivery: { retrySchedule: options.retrySchedule } }),
  })
}

async function createWebhook(server: TestServer, key: TestKey, path: string, extra: Record<string, unknown> = {}): Promise<Webhook & { signing_secret: string }> {
  const res = await server.request<Webhook & { signing_secret: string }>('POST', '/api/v0/webhooks', { key, body: { name: path, url: receiver.url(path), ...extra } })
  expect(res.status).toBe(201)
  return res.body
}

async function createTax(server: TestServer, key: TestKey, name = 'VAT'): Promise<Record<string, unknown>> {
  const res = await server.request<Record<string, unknown>>('POST', '/api/v0/taxes', { key, body: { name, percentage: 20 } })
  expect(res.status).toBe(201)
  return res.body
}

function deliveriesOf(server: TestServer, webhookId: string) {
  return server.app.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('id').execute()
}

function attemptsOf(server: TestServer, webhookId: string) {
  return server.app.db.selectFrom('delivery_attempts').selectAll().where('webhook_id', '=', webhookId).orderBy('id').execute()
}

async function webhookRow(server: TestServer, id: string) {
  return server.app.db.selectFrom('webhooks').selectAll().select(TOTAL_EVENTS).where('id', '=', id).executeTakeFirstOrThrow()
}

function envelopes(path: string): Envelope[] {
  return receiver.arrivals.filter((a) => a.path === path && a.complete).map((a) => JSON.parse(a.body) as Envelope)
}

describe('events: every change emits one, written with its deliveries in the same transaction', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await deliveringServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it('emits each event type with the envelope {id,type,created_at,data} and data as the API returned it', async () => {
    const key = await server.createKey()
    const webhook = await createWebhook(server, key, '/events/all')
    const customer = await server.request<Record<string, unknown>>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' } })
    const customerUpdate = await server.request<Record<string, unknown>>('PATCH', `/api/v0/customers/${String(customer.body.id)}`, { key, body: { last_name: 'King' } })
    // The sandbox's: a live liquidation address takes a receiving address of the platform, which this server has none of.
    const address = await server.request<Record<string, unknown>>('POST', `/api/v0/customers/${String(customer.body.id)}/liquidation_addresses`, {
      key: await server.createKey({ appId: key.appId, environment: 'development' }),
      body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1' },
    })
    const tax = await createTax(server, key)
    const taxUpdate = await server.request<Record<string, unknown>>('PUT', `/api/v0/taxes/${String(tax.id)}`, { key, body: { percentage: 21 } })
    const taxDelete = await server.request<Record<string, unknown>>('DELETE', `/api/v0/taxes/${String(tax.id)}`, { key })
    const webhookUpdate = await server.request<Record<string, unknown>>('PATCH', `/api/v0/webhooks/${webhook.id}`, { key, body: { name: 'renamed' } })
    for (const res of [customer, customerUpdate, address, taxUpdate, taxDelete, webhookUpdate]) expect(res.status).toBeLessThan(300)

    await receiver.waitFor(8, { path: '/events/all' })
    const byType = new Map(envelopes('/events/all').map((e) => [e.type, e]))
    expect([...byType.keys()].sort()).toEqual(
      ['customer.created', 'customer.updated', 'liquidation_address.created', 'tax.created', 'tax.deleted', 'tax.updated', 'webhook.created', 'webhook.updated'].sort(),
    )
    const { signing_secret: _secret, ...createdWebhook } = webhook
    // The event carries the resource at the change; the response also counts the event itself.
    expect(byType.get('webhook.created')?.data).toEqual({ ...createdWebhook, delivery_stats: { ...createdWebhook.delivery_stats, total_events: 0 } })
    expect(byType.get('customer.created')?.data).toEqual(customer.body)
    expect(byType.get('customer.updated')?.data).toEqual(customerUpdate.body)
    expect(byType.get('liquidation_address.created')?.data).toEqual(address.body)
    expect(byType.get('tax.created')?.data).toEqual(tax)
    expect(byType.get('tax.updated')?.data).toEqual(taxUpdate.body)
    expect(byType.get('tax.deleted')?.data).toEqual(taxDelete.body)
    const updatedData = byType.get('webhook.updated')?.data as Webhook | undefined
    expect(updatedData).toEqual({ ...(webhookUpdate.body as unknown as Webhook), delivery_stats: expect.any(Object) })
    for (const envelope of byType.values()) {
      expect(Object.keys(envelope)).toEqual(['id', 'type', 'created_at', 'data'])
      expect(envelope.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const stored = await server.app.db.selectFrom('events').selectAll().where('id', '=', envelope.id).executeTakeFirstOrThrow()
      expect(stored.app_id).toBe(key.appId)
      expect(JSON.parse(stored.payload)).toEqual(envelope)
    }
    await waitUntil('statistics', async () => ((await webhookRow(server, webhook.id)).successful_deliveries === 8 ? true : undefined))
    const stats = (await server.request<Webhook>('GET', `/api/v0/webhooks/${webhook.id}`, { key })).body.delivery_stats
    expect(stats).toEqual({ total_events: 8, successful_deliveries: 8, failed_deliveries: 0, last_delivery: expect.any(String) })
  })

  it('one delivery per active webhook of the application: none for inactive, deleted or other applications’ webhooks', async () => {
    const key = await server.createKey()
    const other = await server.createKey()
    const active = await createWebhook(server, key, '/fanout/active')
    const inactive = await createWebhook(server, key, '/fanout/inactive', { isActive: false })
    const deleted = await createWebhook(server, key, '/fanout/deleted')
    expect((await server.request('DELETE', `/api/v0/webhooks/${deleted.id}`, { key })).status).toBe(200)
    const foreign = await createWebhook(server, other, '/fanout/foreign')
    const before = await server.app.db.selectFrom('deliveries').select('id').execute()
    await createTax(server, key)
    const after = await server.app.db.selectFrom('deliveries').selectAll().where('id', 'not in', before.length === 0 ? [''] : before.map((d) => d.id)).execute()
    expect(after.map((d) => d.webhook_id)).toEqual([active.id])
    expect((await deliveriesOf(server, inactive.id)).length).toBe(0)
    expect((await webhookRow(server, inactive.id)).total_events).toBe(0)
    expect((await deliveriesOf(server, foreign.id)).length).toBe(1) // its own webhook.created only
  })

  it('no event for an update that names no field, nor for a refused change', async () => {
    const key = await server.createKey()
    const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'A', last_name: 'B', phone_number: '+15550101', email: 'a@example.com' } })
    const count = async () => (await server.app.db.selectFrom('events').select('id').where('app_id', '=', key.appId).execute()).length
    expect(await count()).toBe(1)
    expect((await server.request('PATCH', `/api/v0/customers/${customer.body.id}`, { key, body: {} })).status).toBe(200)
    expect((await server.request('POST', '/api/v0/customers', { key, body: { first_name: 'A', last_name: 'B', phone_number: '+15550101', email: 'A@example.com' } })).status).toBe(409)
    expect((await server.request('POST', '/api/v0/taxes', { key, body: { name: 'x', percentage: 101 } })).status).toBe(400)
    expect((await server.request('PUT', '/api/v0/taxes/00000000-0000-4000-8000-000000000000', { key, body: { percentage: 1 } })).status).toBe(404)
    expect(await count()).toBe(1)
  })

  it('a failure while writing the deliveries rolls back the change and its event', async () => {
    const key = await server.createKey()
    await createWebhook(server, key, '/atomic')
    const { sql } = await import('kysely')
    if (TEST_BACKEND === 'sqlite') {
      await sql`create trigger fail_deliveries before insert on deliveries begin select raise(abort, 'injected failure'); end`.execute(server.app.db)
    } else {
      await sql`create function fail_insert() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(server.app.db)
      await sql`create trigger fail_deliveries before insert on deliveries for each row execute function fail_insert()`.execute(server.app.db)
    }
    try {
      const res = await server.request('POST', '/api/v0/customers', { key, body: { first_name: 'Lost', last_name: 'Change', phone_number: '+15550102' } })
      expect(res.status).toBe(500)
    } finally {
      if (TEST_BACKEND === 'sqlite') await sql`drop trigger fail_deliveries`.execute(server.app.db)
      else await sql`drop trigger fail_deliveries on deliveries`.execute(server.app.db)
    }
    const customers = await server.app.db.selectFrom('customers').select('id').where('app_id', '=', key.appId).execute()
    expect(customers).toEqual([])
    const events = await server.app.db.selectFrom('events').select('type').where('app_id', '=', key.appId).execute()
    expect(events.map((e) => e.type)).toEqual(['webhook.created'])
  })
})

describe('signed as Standard Webhooks, encrypted as JWE when asked', () => {
  let server: TestServer
  let key: TestKey
  beforeAll(async () => {
    server = await deliveringServer({ retrySchedule: [50] })
    key = await server.createKey()
  })
  afterAll(async () => {
    await server.close()
  })

  it('a receiver verifies every delivery with the standardwebhooks package; webhook-id is the event id, the same on a retry', async () => {
    let calls = 0
    receiver.setAnswer((arrival) => (arrival.path === '/signed' && calls++ === 1 ? { status: 500 } : { status: 200 }))
    try {
      const webhook = await createWebhook(server, key, '/signed')
      await createTax(server, key)
      const arrivals = await receiver.waitFor(3, { path: '/signed' })
      const verifier = new StandardWebhook(webhook.signing_secret)
      for (const arrival of arrivals) {
        const headers = { 'webhook-id': String(arrival.headers['webhook-id']), 'webhook-timestamp': String(arrival.headers['webhook-timestamp']), 'webhook-signature': String(arrival.headers['webhook-signature']) }
        const payload = verifier.verify(arrival.body, headers) as Envelope
        expect(payload.id).toBe(headers['webhook-id'])
        expect(arrival.headers['content-type']).toBe('application/json')
        expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10)
        expect(() => new StandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(arrival.body, headers)).toThrow()
        expect(() => verifier.verify(`${arrival.body} `, headers)).toThrow()
      }
      // The tax event failed once (500) and was retried under the same webhook-id.
      const ids = arrivals.map((a) => a.headers['webhook-id'])
      expect(ids[1]).toBe(ids[2])
      expect(new Set(ids).size).toBe(2)
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  })

  it('encrypted: application/jose, signature over the ciphertext, decrypts with jose using HKDF-SHA256(secret, info)', async () => {
    const webhook = await createWebhook(server, key, '/encrypted', { encrypted: true })
    const [arrival] = await receiver.waitFor(1, { path: '/encrypted' })
    if (arrival === undefined) throw new Error('no arrival')
    expect(arrival.headers['content-type']).toBe('application/jose')
    const headers = { 'webhook-id': String(arrival.headers['webhook-id']), 'webhook-timestamp': String(arrival.headers['webhook-timestamp']), 'webhook-signature': String(arrival.headers['webhook-signature']) }
    new StandardWebhook(webhook.signing_secret).verify(arrival.body, headers, { jsonParse: false })
    expect(arrival.body.split('.')).toHaveLength(5)
    expect(decodeProtectedHeader(arrival.body)).toEqual({ alg: 'dir', enc: 'A256GCM' })
    // The receiver's side, with WebCrypto only: the key is HKDF-SHA256(secret bytes, no salt, info), 32 bytes.
    const secretBytes = Buffer.from(webhook.signing_secret.slice('whsec_'.length), 'base64')
    const hkdfKey = await crypto.subtle.importKey('raw', secretBytes, 'HKDF', false, ['deriveBits'])
    const bits = await crypto.subtle.deriveBits(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode('devplatform webhook payload encryption v1') },
      hkdfKey,
      256,
    )
    const { plaintext } = await compactDecrypt(arrival.body, new Uint8Array(bits))
    const envelope = JSON.parse(new TextDecoder().decode(plaintext)) as Envelope
    expect(envelope.type).toBe('webhook.created')
    expect(envelope.id).toBe(headers['webhook-id'])
    expect(envelope.data.id).toBe(webhook.id)
    await expect(compactDecrypt(arrival.body, new Uint8Array(32))).rejects.toThrow()
  })
})

describe('each attempt', () => {
  let server: TestServer
  let key: TestKey
  beforeAll(async () => {
    server = await deliveringServer({ retrySchedule: [60_000], timeoutMs: 400 })
    key = await server.createKey()
  })
  afterAll(async () => {
    await server.close()
  })

  async function firstAttempt(path: string, answer: Parameters<Receiver['setAnswer']>[0], url?: string) {
    receiver.setAnswer((arrival) => (arrival.path === path ? answer(arrival) : { status: 200 }))
    try {
      const res = await server.request<Webhook>('POST', '/api/v0/webhooks', { key, body: { name: path, url: url ?? receiver.url(path) } })
      expect(res.status).toBe(201)
      const [attempt] = await waitUntil(`an attempt for ${path}`, async () => {
        const rows = await attemptsOf(server, res.body.id)
        return rows.length > 0 ? rows : undefined
      })
      const [delivery] = await deliveriesOf(server, res.body.id)
      const webhook = await webhookRow(server, res.body.id)
      if (attempt === undefined || delivery === undefined) throw new Error('missing rows')
      return { attempt, delivery, webhook }
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  }

  it.each([200, 204, 299])('%i is a success: counted, recorded with the response body', async (status) => {
    const { attempt, delivery, webhook } = await firstAttempt(`/status/${status}`, () => ({ status, body: status === 204 ? '' : 'thanks' }))
    expect(attempt).toMatchObject({ attempt: 1, outcome: 'succeeded', status_code: status, error: null, response_body: status === 204 ? '' : 'thanks' })
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, claim_token: null })
    expect(webhook).toMatchObject({ successful_deliveries: 1, failed_deliveries: 0, last_delivery: attempt.started_at })
  })

  it.each([300, 302, 400, 404, 500])('%i is a failed attempt, retried later; a redirect is not followed', async (status) => {
    const path = `/status/${status}`
    const { attempt, delivery, webhook } = await firstAttempt(path, (): Answer => ({ status, headers: status < 400 ? { location: receiver.url('/redirected') } : {}, body: 'nope' }))
    expect(attempt).toMatchObject({ attempt: 1, outcome: 'failed', status_code: status, error: `HTTP ${status}`, response_body: 'nope' })
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, claim_token: null })
    expect(Date.parse(delivery.next_attempt_at) - Date.parse(attempt.started_at)).toBeGreaterThan(40_000)
    expect(webhook).toMatchObject({ successful_deliveries: 0, failed_deliveries: 1, last_delivery: attempt.started_at })
    expect(receiver.arrivals.some((a) => a.path === '/redirected')).toBe(false)
  })

  it('no answer within the timeout is a failed attempt', async () => {
    const { attempt, webhook } = await firstAttempt('/slow', () => 'hang')
    expect(attempt).toMatchObject({ outcome: 'failed', status_code: null, error: 'timed out after 400 ms' })
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(390)
    expect(webhook.failed_deliveries).toBe(1)
  })

  it('keeps the first 20 KB of the response body', async () => {
    const { attempt } = await firstAttempt('/big', () => ({ status: 200, body: 'x'.repeat(100_000) }))
    expect(attempt.outcome).toBe('succeeded')
    expect(attempt.response_body).toBe('x'.repeat(20 * 1024))
    const { attempt: small } = await firstAttempt('/just-under', () => ({ status: 200, body: 'y'.repeat(20 * 1024 - 1) }))
    expect(small.response_body).toHaveLength(20 * 1024 - 1)
  })

  it('a connection error is a failed attempt with the error kept', async () => {
    const closed = await startReceiver()
    const url = closed.url('/gone-server')
    await closed.close()
    const { attempt } = await firstAttempt('/unused', () => ({ status: 200 }), url)
    expect(attempt).toMatchObject({ outcome: 'failed', status_code: null })
    expect(attempt.error).toMatch(/ECONNREFUSED/)
  })

  it('Retry-After on 429 and 503 is honoured up to twice the scheduled wait; elsewhere it is ignored', async () => {
    const wait = async (path: string, status: number, retryAfter: string) => {
      const { attempt, delivery } = await firstAttempt(path, () => ({ status, headers: { 'retry-after': retryAfter } }))
      return Date.parse(delivery.next_attempt_at) - Date.parse(attempt.started_at) - attempt.duration_ms
    }
    const honoured = await wait('/ra/429', 429, '2')
    expect(honoured).toBeGreaterThanOrEqual(1990)
    expect(honoured).toBeLessThan(2100)
    const capped = await wait('/ra/503', 503, '3600')
    expect(capped).toBeGreaterThanOrEqual(2 * 48_000 - 10)
    expect(capped).toBeLessThanOrEqual(2 * 72_000 + 10)
    const date = await wait('/ra/date', 503, new Date(Date.now() + 30_000).toUTCString())
    expect(date).toBeGreaterThan(25_000)
    expect(date).toBeLessThan(31_000)
    const ignored = await wait('/ra/500', 500, '2')
    expect(ignored).toBeGreaterThanOrEqual(48_000 - 10)
  })

  it('410 Gone deactivates the webhook at once and cancels its pending deliveries', async () => {
    const path = '/gone'
    receiver.setAnswer((arrival) => (arrival.path === path ? { status: 410 } : { status: 200 }))
    try {
      const webhook = await createWebhook(server, key, path)
      await waitUntil('deactivation', async () => ((await webhookRow(server, webhook.id)).is_active === 0 ? true : undefined))
      const fetched = await server.request<Webhook>('GET', `/api/v0/webhooks/${webhook.id}`, { key })
      expect(fetched.body.isActive).toBe(false)
      expect(fetched.body.delivery_stats.failed_deliveries).toBe(1)
      const [delivery] = await deliveriesOf(server, webhook.id)
      expect(delivery?.status).toBe('failed')
      const arrivalsBefore = receiver.arrivals.filter((a) => a.path === path).length
      await createTax(server, key)
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(receiver.arrivals.filter((a) => a.path === path).length).toBe(arrivalsBefore)
      expect((await deliveriesOf(server, webhook.id)).length).toBe(1)
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  })
})

describe('retries', () => {
  it('fails for good after the schedule is used up: 1 + schedule length attempts, each one counted', async () => {
    const server = await deliveringServer({ retrySchedule: [30, 30, 30] })
    try {
      const key = await server.createKey()
      receiver.setAnswer((arrival) => (arrival.path === '/always-500' ? { status: 500 } : { status: 200 }))
      const webhook = await createWebhook(server, key, '/always-500')
      await waitUntil('final failure', async () => ((await deliveriesOf(server, webhook.id))[0]?.status === 'failed' ? true : undefined))
      const attempts = await attemptsOf(server, webhook.id)
      expect(attempts.map((a) => [a.attempt, a.outcome, a.status_code])).toEqual([
        [1, 'failed', 500],
        [2, 'failed', 500],
        [3, 'failed', 500],
        [4, 'failed', 500],
      ])
      const [delivery] = await deliveriesOf(server, webhook.id)
      expect(delivery).toMatchObject({ attempts: 4, claim_token: null })
      await new Promise((resolve) => setTimeout(resolve, 150))
      expect(receiver.arrivals.filter((a) => a.path === '/always-500')).toHaveLength(4)
      expect(await webhookRow(server, webhook.id)).toMatchObject({ total_events: 1, successful_deliveries: 0, failed_deliveries: 4 })
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
      await server.close()
    }
  })
})

describe('deleting a webhook stops everything at once', () => {
  let server: TestServer
  let key: TestKey
  beforeAll(async () => {
    server = await deliveringServer({ timeoutMs: 10_000 })
    key = await server.createKey()
  })
  afterAll(async () => {
    await server.close()
  })

  it('cancels pending deliveries in the deleting transaction and aborts the attempt on the wire', async () => {
    receiver.setAnswer((arrival) => (arrival.path === '/hangs' ? 'hang' : { status: 200 }))
    try {
      const webhook = await createWebhook(server, key, '/hangs')
      for (let i = 0; i < 40; i++) await createTax(server, key, `t${i}`)
      await waitUntil('16 attempts on the wire', () => (receiver.arrivals.filter((a) => a.path === '/hangs').length >= 16 ? true : undefined))
      const res = await server.request('DELETE', `/api/v0/webhooks/${webhook.id}`, { key })
      expect(res.status).toBe(200)
      const deliveries = await deliveriesOf(server, webhook.id)
      expect(deliveries).toHaveLength(41)
      expect(deliveries.filter((d) => d.status === 'pending')).toEqual([])
      expect(deliveries.every((d) => d.status === 'canceled')).toBe(true)
      const onTheWire = receiver.arrivals.filter((a) => a.path === '/hangs')
      await waitUntil('aborted requests', () => (onTheWire.every((a) => a.aborted) ? true : undefined), 1000)
      const attempts = await waitUntil('canceled attempts recorded', async () => {
        const rows = await attemptsOf(server, webhook.id)
        return rows.length === onTheWire.length ? rows : undefined
      })
      expect(attempts.every((a) => a.outcome === 'canceled' && a.error === 'aborted: webhook deleted or deactivated')).toBe(true)
      // Kept for audit, statistics included; aborted attempts are not failures.
      expect(await webhookRow(server, webhook.id)).toMatchObject({ total_events: 41, successful_deliveries: 0, failed_deliveries: 0 })
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  })

  it('deactivating (isActive false) stops the same way', async () => {
    receiver.setAnswer((arrival) => (arrival.path === '/deactivated' ? 'hang' : { status: 200 }))
    try {
      const webhook = await createWebhook(server, key, '/deactivated')
      for (let i = 0; i < 20; i++) await createTax(server, key, `d${i}`)
      await waitUntil('attempts on the wire', () => (receiver.arrivals.filter((a) => a.path === '/deactivated').length >= 16 ? true : undefined))
      expect((await server.request('PATCH', `/api/v0/webhooks/${webhook.id}`, { key, body: { isActive: false } })).status).toBe(200)
      expect((await deliveriesOf(server, webhook.id)).filter((d) => d.status === 'pending')).toEqual([])
      await waitUntil('aborted', () => (receiver.arrivals.filter((a) => a.path === '/deactivated').every((a) => a.aborted) ? true : undefined), 1000)
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  })

  it('no request to a webhook begins after its DELETE returned: 300 rounds racing deletes against a stream of events', async () => {
    // The receiver runs in its own process and orders arrivals against a fence the test sends
    // once each DELETE has returned (see test/fixtures/race-receiver.mjs): no clocks involved.
    const child = spawn(process.execPath, [RACE_RECEIVER], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())))
        child.once('exit', () => reject(new Error('race receiver exited')))
      })
      const rounds = 300
      for (let round = 0; round < rounds; round++) {
        // Even rounds answer at once (deliveries keep flowing while the delete lands); odd rounds hang (attempts sit on the wire).
        const path = `/race/${round}`
        const created = await server.request<Webhook>('POST', '/api/v0/webhooks', { key, body: { name: path, url: `http://127.0.0.1:${port}${path}` } })
        expect(created.status).toBe(201)
        const stream = Array.from({ length: 6 }, (_, i) => createTax(server, key, `r${round}-${i}`))
        // Even rounds: one event of the stream has committed (its delivery is due) when the delete is sent.
        if (round % 2 === 0) await Promise.race(stream)
        else await new Promise((resolve) => setTimeout(resolve, round % 4))
        const res = await server.request('DELETE', `/api/v0/webhooks/${created.body.id}`, { key })
        expect(res.status).toBe(200)
        await sendFence(port, path)
        await Promise.all(stream)
      }
      await new Promise((resolve) => setTimeout(resolve, 300))
      const seen = (await (await fetch(`http://127.0.0.1:${port}/__arrivals`)).json()) as {
        arrivals: { path: string; sequence: number; aborted: boolean }[]
        fences: Record<string, number>
      }
      const arrivals = seen.arrivals
      expect(Object.keys(seen.fences)).toHaveLength(rounds)
      const late = arrivals.filter((a) => a.sequence > (seen.fences[a.path] ?? Number.POSITIVE_INFINITY))
      expect(late).toEqual([])
      // The race was real: deliveries arrived before deletes, the hanging ones were all aborted, and deletes canceled pending ones.
      expect(arrivals.filter((a) => Number(a.path.split('/')[2]) % 2 === 1 && !a.aborted)).toEqual([])
      expect(arrivals.length).toBeGreaterThan(rounds)
      const canceled = await server.app.db.selectFrom('deliveries').select('id').where('status', '=', 'canceled').execute()
      expect(canceled.length).toBeGreaterThan(rounds)
    } finally {
      child.kill()
    }
  }, 120_000)
})

describe('shutting down while delivering', () => {
  it('the claim loop ends its turn before the database closes: no query runs on the closed database, nothing is logged as an error', async () => {
    const server = await deliveringServer()
    const key = await server.createKey()
    // More webhooks than a write fans out to itself: the dispatcher's turns write deliveries as
    // well as claim them, and with many webhooks it claims at once whenever a slot frees up.
    for (let n = 0; n <= INLINE_FANOUT_MAX; n++) await createWebhook(server, key, '/shutdown')
    // A backlog the dispatcher is still working through when the server closes.
    await Promise.all(Array.from({ length: 100 }, (_, n) => server.app.transact((tx) => tx.events.emit(key.appId, 'tax.created', { n }))))
    await receiver.waitFor(500, { path: '/shutdown' })
    await server.close()
    // A turn that outlived close() would fail on the closed database about now, and log it.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const errors = server
      .logs()
      .split('\n')
      .filter((line) => line.includes('"level":50'))
    expect(errors).toEqual([])
  })
})
