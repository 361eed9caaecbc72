import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backfillEventEnvironments } from '../../../src/events/migrations.js'
import { EVENT_TYPES } from '../../../src/resources/index.js'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'

/**
 * GET /events: the outbox's events of the caller's application as its environment sees them, newest
 * first, filtered by type and time, paged by cursor; each the envelope its webhooks received.
 */

interface Envelope {
  id: string
  type: string
  created_at: string
  data: Record<string, unknown>
}
interface Page {
  data: Envelope[]
  has_more: boolean
}

let server: TestServer
/** one application's production (live) and development (sandbox) keys, and another application's */
let live: TestKey
let sandbox: TestKey
let other: TestKey

beforeAll(async () => {
  server = await startTestServer()
  live = await server.createKey()
  sandbox = await server.createKey({ appId: live.appId, environment: 'development' })
  other = await server.createKey()
  const made = async (key: TestKey, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await server.request('POST', path, { key, body, headers })
    expect(res.status, `${path}: ${res.text}`).toBe(201)
  }
  // The application's own objects (both environments), sandbox money and live money, in this order.
  await made(live, '/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })
  await made(sandbox, '/api/v0/test-payment', { amount: 10, currency: 'USD', description: 'one' }, { 'idempotency-key': 'events-test-1' })
  await made(live, '/api/v0/taxes', { name: 'VAT', percentage: 20 })
  const wallets = (await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key: live })).body.data
  await made(live, '/api/v0/transfers/direct-bank', { walletId: wallets[0]?.id, paymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 100 })
  await made(sandbox, '/api/v0/test-payment', { amount: 11, currency: 'USD', description: 'two' }, { 'idempotency-key': 'events-test-2' })
  await made(other, '/api/v0/customers', { first_name: 'Grace', last_name: 'Hopper', phone_number: '+15550101' })
})
afterAll(async () => server.close())

const list = (key: TestKey, query = '') => server.request<Page>('GET', `/api/v0/events${query}`, { key })
const typesOf = (page: Page) => page.data.map((event) => event.type)

describe('GET /events', () => {
  it("lists newest first what the key's environment sees: its money's events and the application's own", async () => {
    const liveEvents = await list(live)
    expect(liveEvents.status).toBe(200)
    expect(typesOf(liveEvents.body)).toEqual(['transfer.created', 'tax.created', 'customer.created'])
    expect(liveEvents.body.has_more).toBe(false)
    expect(typesOf((await list(sandbox)).body)).toEqual(['test_payment.created', 'tax.created', 'test_payment.created', 'customer.created'])
    expect(typesOf((await list(other)).body)).toEqual(['customer.created'])
  })

  it('each item is the envelope its webhooks received, as the outbox stores it', async () => {
    const { body } = await list(sandbox)
    for (const event of body.data) {
      const row = await server.app.db.selectFrom('events').select('payload').where('id', '=', event.id).executeTakeFirstOrThrow()
      expect(event).toEqual(JSON.parse(row.payload))
      expect(Object.keys(event)).toEqual(['id', 'type', 'created_at', 'data'])
    }
    const payment = body.data[0] as Envelope
    expect(payment.data).toMatchObject({ amount: 11, livemode: false })
  })

  it('GET /events/{id}: one event; another environment\'s or application\'s is 404, as a missing one', async () => {
    const [transfer, tax] = (await list(live)).body.data as [Envelope, Envelope]
    expect((await server.request('GET', `/api/v0/events/${transfer.id}`, { key: live })).body).toEqual(transfer)
    expect((await server.request('GET', `/api/v0/events/${transfer.id.toUpperCase()}`, { key: live })).body).toEqual(transfer)
    // The application's own objects are seen from both environments.
    expect((await server.request('GET', `/api/v0/events/${tax.id}`, { key: sandbox })).body).toEqual(tax)
    for (const [key, id] of [
      [sandbox, transfer.id],
      [other, tax.id],
      [live, MISSING_UUID],
    ] as const) {
      expect((await server.request('GET', `/api/v0/events/${id}`, { key })).body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Event not found' })
    }
    expect((await server.request('GET', '/api/v0/events/not-a-uuid', { key: live })).body).toMatchObject({ statusCode: 400, message: 'Invalid event ID format' })
  })

  it('type: one or several, repeated or comma-separated; each a known type, at most 20', async () => {
    expect(typesOf((await list(sandbox, '?type=test_payment.created')).body)).toEqual(['test_payment.created', 'test_payment.created'])
    expect(typesOf((await list(sandbox, '?type=customer.created&type=tax.created')).body)).toEqual(['tax.created', 'customer.created'])
    expect(typesOf((await list(sandbox, '?type=customer.created,tax.created')).body)).toEqual(['tax.created', 'customer.created'])
    expect(typesOf((await list(sandbox, '?type=invoice.paid')).body)).toEqual([])
    const unknown = await list(sandbox, '?type=tax.created,tax.exploded')
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ message: expect.stringMatching(/^type: "tax.exploded" is not an event type \(event types: webhook.created, /) })
    const twenty = EVENT_TYPES.slice(0, 20)
    expect(twenty).toHaveLength(20)
    expect((await list(sandbox, `?type=${twenty.join(',')}`)).status).toBe(200)
    expect((await list(sandbox, `?type=${EVENT_TYPES.slice(0, 21).join(',')}`)).body).toMatchObject({ statusCode: 400, message: 'type names 21 event types: at most 20' })
    expect((await list(sandbox, '?type=')).status).toBe(400)
  })

  it('created_after and created_before: exclusive, on both sides of an event, in any offset; a calendar date and time', async () => {
    const tax = (await list(live, '?type=tax.created')).body.data[0] as Envelope
    const at = Date.parse(tax.created_at)
    const iso = (ms: number) => new Date(ms).toISOString()
    const taxes = async (query: string) => typesOf((await list(live, `?type=tax.created&${query}`)).body)
    expect(await taxes(`created_after=${iso(at - 1)}`)).toEqual(['tax.created'])
    expect(await taxes(`created_after=${iso(at)}`)).toEqual([])
    expect(await taxes(`created_before=${iso(at + 1)}`)).toEqual(['tax.created'])
    expect(await taxes(`created_before=${iso(at)}`)).toEqual([])
    // The same instant two hours east of UTC.
    const east = new Date(at + 2 * 3600_000 - 1).toISOString().replace('Z', '+02:00')
    expect(await taxes(`created_after=${encodeURIComponent(east)}`)).toEqual(['tax.created'])
    // A range: after must be before before (one millisecond apart is a range, an instant is not).
    expect(await taxes(`created_after=${iso(at - 1)}&created_before=${iso(at + 1)}`)).toEqual(['tax.created'])
    expect((await list(live, `?created_after=${iso(at - 1)}&created_before=${iso(at)}`)).status).toBe(200)
    expect((await list(live, `?created_after=${iso(at)}&created_before=${iso(at)}`)).body).toMatchObject({ statusCode: 400, message: 'created_after must be before created_before' })
    for (const bad of ['2026-11-21', '2026-02-30T00:00:00Z', '2026-11-21T24:00:00Z', 'yesterday', '2026-11-21T10:00:00']) {
      expect((await list(live, `?created_after=${bad}`)).status, bad).toBe(400)
    }
    expect((await list(live, '?created_after=2026-02-28T23:59:59.999Z')).status).toBe(200)
  })

  it('take: 1 to 100 (default 10); starting_after and ending_before page through, exclusive, newest first', async () => {
    expect((await list(sandbox, '?take=0')).status).toBe(400)
    expect((await list(sandbox, '?take=101')).status).toBe(400)
    expect((await list(sandbox, '?take=100')).status).toBe(200)
    const all = (await list(sandbox)).body.data.map((event) => event.id)
    expect(all).toHaveLength(4)
    const first = (await list(sandbox, '?take=1')).body
    expect(first).toEqual({ data: [expect.objectContaining({ id: all[0] })], has_more: true })
    const second = (await list(sandbox, `?take=2&starting_after=${all[0]}`)).body
    expect(second.data.map((event) => event.id)).toEqual([all[1], all[2]])
    expect(second.has_more).toBe(true)
    const last = (await list(sandbox, `?take=2&starting_after=${all[2]}`)).body
    expect(last).toEqual({ data: [expect.objectContaining({ id: all[3] })], has_more: false })
    // Back up from the last: the events newer than it, nearest first, the page still newest first.
    const before = (await list(sandbox, `?take=2&ending_before=${all[3]}`)).body
    expect(before.data.map((event) => event.id)).toEqual([all[1], all[2]])
    expect(before.has_more).toBe(true)
    expect((await list(sandbox, `?take=2&ending_before=${all[1]}`)).body).toEqual({ data: [expect.objectContaining({ id: all[0] })], has_more: false })
    // With the filters.
    expect(typesOf((await list(sandbox, `?type=test_payment.created&starting_after=${all[0]}`)).body)).toEqual(['test_payment.created'])
  })

  it('a cursor must be an event the key sees; not both at once; no skip', async () => {
    const mine = (await list(sandbox)).body.data[0] as Envelope
    const others = (await list(other)).body.data[0] as Envelope
    const liveOnly = (await list(live, '?type=transfer.created')).body.data[0] as Envelope
    for (const id of [others.id, liveOnly.id, MISSING_UUID]) {
      expect((await list(sandbox, `?starting_after=${id}`)).body).toEqual({ statusCode: 400, error: 'Bad Request', message: `starting_after names no event of this application: ${id}` })
      expect((await list(sandbox, `?ending_before=${id}`)).status).toBe(400)
    }
    expect((await list(sandbox, `?starting_after=${mine.id}&ending_before=${mine.id}`)).body).toMatchObject({ statusCode: 400, message: 'Give starting_after or ending_before, not both' })
    expect((await list(sandbox, '?starting_after=x')).body).toMatchObject({ statusCode: 400, message: 'starting_after must be an event id (UUID)' })
    expect((await list(sandbox, '?skip=1')).status).toBe(400)
  })

  it('the events written before the environment was kept get it from their data (migration 0025)', async () => {
    const [transfer] = (await list(live, '?type=transfer.created')).body.data as [Envelope]
    await server.app.db.updateTable('events').set({ environment: null }).where('app_id', '=', live.appId).execute()
    await backfillEventEnvironments(server.app.db)
    const rows = await server.app.db.selectFrom('events').select(['type', 'environment']).where('app_id', '=', live.appId).orderBy('id').execute()
    expect(rows).toEqual([
      { type: 'customer.created', environment: null },
      { type: 'test_payment.created', environment: 'sandbox' },
      { type: 'tax.created', environment: null },
      { type: 'transfer.created', environment: 'live' },
      { type: 'test_payment.created', environment: 'sandbox' },
    ])
    expect((await server.request('GET', `/api/v0/events/${transfer.id}`, { key: sandbox })).status).toBe(404)
  })
})
