import type { KyselyPlugin } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventsRepository, INLINE_FANOUT_MAX } from '../../src/events/events-repository.js'
import { runUnitOfWork } from '../../src/db/unit-of-work.js'
import { fanOutAll, quiet } from '../helpers/fan-out.js'
import { TOTAL_EVENTS, WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Receiver, startReceiver } from '../receiver.js'

// A webhook's event_types decides which events it is sent, in both fan-outs: the one inside the
// write's transaction (at most INLINE_FANOUT_MAX active webhooks) and the dispatcher's deferred
// one (more). An event it does not list makes no delivery to it and is not counted in its
// total_events; a webhook.test from POST /webhooks/{id}/test goes to it whatever it lists. The
// dispatcher is off except in the end-to-end block, so the deliveries written can be read.

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.close()
})

async function createWebhook(key: TestKey, name: string, eventTypes?: string[] | null): Promise<string> {
  const body = { name, url: `https://example.com/${name}`, ...(eventTypes === undefined ? {} : { event_types: eventTypes }) }
  const res = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body })
  expect(res.status).toBe(201)
  return res.body.id
}

/** The newest event of the type in the application. */
const latestEvent = (appId: string, type: string) =>
  server.app.db
    .selectFrom('events')
    .select(['id', 'fanout_pending'])
    .where('app_id', '=', appId)
    .where('type', '=', type)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow()

async function createTax(key: TestKey): Promise<{ id: string; fanout_pending: number }> {
  expect((await server.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20 } })).status).toBe(201)
  return latestEvent(key.appId, 'tax.created')
}

async function createCustomer(key: TestKey): Promise<{ id: string; fanout_pending: number }> {
  const body = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }
  expect((await server.request('POST', '/api/v0/customers', { key, body })).status).toBe(201)
  return latestEvent(key.appId, 'customer.created')
}

const receiversOf = async (eventId: string) =>
  (await server.app.db.selectFrom('deliveries').select('webhook_id').where('event_id', '=', eventId).orderBy('webhook_id').execute()).map((d) => d.webhook_id)
const totalEvents = async (webhookId: string) =>
  (await server.app.db.selectFrom('webhooks').select(TOTAL_EVENTS).where('id', '=', webhookId).executeTakeFirstOrThrow()).total_events
const typesDeliveredTo = async (webhookId: string) =>
  (
    await server.app.db
      .selectFrom('deliveries')
      .innerJoin('events', 'events.id', 'deliveries.event_id')
      .select('events.type')
      .where('deliveries.webhook_id', '=', webhookId)
      .orderBy('deliveries.created_at')
      .orderBy('deliveries.id')
      .execute()
  ).map((row) => row.type)

describe('the inline fan-out (the write’s own transaction)', () => {
  it('an event goes to the webhooks that list its type and to those that list none, not to the others; total_events counts only what each received', async () => {
    const key = await server.createKey()
    const taxes = await createWebhook(key, 'taxes', ['tax.created'])
    const customers = await createWebhook(key, 'customers', ['customer.created', 'customer.updated'])
    const all = await createWebhook(key, 'all')

    const tax = await createTax(key)
    expect(tax.fanout_pending).toBe(0)
    expect(await receiversOf(tax.id)).toEqual([taxes, all].sort())
    const customer = await createCustomer(key)
    expect(await receiversOf(customer.id)).toEqual([customers, all].sort())

    // Neither listing webhook.created, neither was sent its own (nor the other's).
    expect(await typesDeliveredTo(taxes)).toEqual(['tax.created'])
    expect(await typesDeliveredTo(customers)).toEqual(['customer.created'])
    expect(await typesDeliveredTo(all)).toEqual(['webhook.created', 'tax.created', 'customer.created'])
    expect([await totalEvents(taxes), await totalEvents(customers), await totalEvents(all)]).toEqual([1, 1, 3])
    const answered = await server.request<{ delivery_stats: { total_events: number } }>('GET', `/api/v0/webhooks/${taxes}`, { key })
    expect(answered.body.delivery_stats.total_events).toBe(1)
  })

  it('an application’s only webhook (PostgreSQL’s one-statement path): an event it does not list is written with no delivery; one it lists gets one', async () => {
    const key = await server.createKey()
    const only = await createWebhook(key, 'only', ['customer.created'])
    const tax = await createTax(key)
    expect(tax.fanout_pending).toBe(0)
    expect(await receiversOf(tax.id)).toEqual([])
    const customer = await createCustomer(key)
    expect(await receiversOf(customer.id)).toEqual([only])
    expect(await totalEvents(only)).toBe(1)
  })

  it('a webhook that lists webhook.created is sent its own; the created webhook answers with it counted', async () => {
    const key = await server.createKey()
    const res = await server.request<{ id: string; delivery_stats: { total_events: number } }>('POST', '/api/v0/webhooks', {
      key,
      body: { name: 'self', url: 'https://example.com/self', event_types: ['webhook.created'] },
    })
    expect(res.body.delivery_stats.total_events).toBe(1)
    const other = await server.request<{ delivery_stats: { total_events: number } }>('POST', '/api/v0/webhooks', {
      key,
      body: { name: 'other', url: 'https://example.com/other', event_types: ['tax.created'] },
    })
    expect(other.body.delivery_stats.total_events).toBe(0)
  })

  it('a PATCH applies to the events after it, its own webhook.updated included', async () => {
    const key = await server.createKey()
    const id = await createWebhook(key, 'changing', ['tax.created'])
    // Now it lists customer.created only: its own webhook.updated is not sent to it.
    expect((await server.request('PATCH', `/api/v0/webhooks/${id}`, { key, body: { event_types: ['customer.created'] } })).status).toBe(200)
    expect(await receiversOf((await createTax(key)).id)).toEqual([])
    expect(await receiversOf((await createCustomer(key)).id)).toEqual([id])
    // Cleared: every type again, from its own webhook.updated on.
    const cleared = await server.request<{ delivery_stats: { total_events: number } }>('PATCH', `/api/v0/webhooks/${id}`, { key, body: { event_types: null } })
    expect(cleared.status).toBe(200)
    expect(await receiversOf((await createTax(key)).id)).toEqual([id])
    expect(await typesDeliveredTo(id)).toEqual(['customer.created', 'webhook.updated', 'tax.created'])
    expect(cleared.body.delivery_stats.total_events).toBe(2)
    expect(await totalEvents(id)).toBe(3)
  })

  it('POST /webhooks/{id}/test is sent to the webhook whatever it lists, and counted', async () => {
    const key = await server.createKey()
    const id = await createWebhook(key, 'tested', ['tax.deleted'])
    const sent = await server.request<{ id: string; event: { type: string } }>('POST', `/api/v0/webhooks/${id}/test`, { key })
    expect(sent.status).toBe(202)
    expect(sent.body.event.type).toBe('webhook.test')
    expect(await typesDeliveredTo(id)).toEqual(['webhook.test'])
    expect(await totalEvents(id)).toBe(1)
  })

  it('no filter in the application: the write runs the statements it ran before filters (one read of the webhooks, then the writes)', async () => {
    const key = await server.createKey()
    const webhooks = [await createWebhook(key, 'a'), await createWebhook(key, 'b')]
    const statements = async (): Promise<number> => {
      let count = 0
      const counting: KyselyPlugin = { transformQuery: (args) => args.node, transformResult: async (args) => (count++, args.result) }
      await runUnitOfWork(server.app.db, quiet, (unit) => new EventsRepository(unit.tx.withPlugin(counting), unit).emit(key.appId, 'tax.created', {}))
      return count
    }
    // The candidates' read, the event, the deliveries (one insert), the counts (one upsert).
    expect(await statements()).toBe(4)
    // A filter is applied to the rows already read: no statement more, one delivery fewer.
    expect((await server.request('PATCH', `/api/v0/webhooks/${webhooks[0] ?? ''}`, { key, body: { event_types: ['customer.created'] } })).status).toBe(200)
    expect(await statements()).toBe(4)
    expect(await receiversOf((await latestEvent(key.appId, 'tax.created')).id)).toEqual([webhooks[1]])
  })
})

describe(`the deferred fan-out (more than ${INLINE_FANOUT_MAX} active webhooks)`, () => {
  /** An application with `unfiltered` webhooks listing nothing (written directly: fast) and a key for it. */
  async function bigApplication(unfiltered: number): Promise<TestKey> {
    const key = await server.createKey()
    const repository = new WebhooksRepository(server.app.db)
    for (let i = 0; i < unfiltered; i++) {
      await repository.create(key.appId, { name: `w${i}`, url: `https://example.com/${i}`, isActive: true, encrypted: false, signingSecret: 'whsec_x' })
    }
    return key
  }

  it('an event goes to the webhooks that list its type or none, not to the others; total_events counts only what each received', async () => {
    const key = await bigApplication(INLINE_FANOUT_MAX - 1)
    const taxes = await createWebhook(key, 'taxes', ['tax.created', 'customer.updated'])
    const customers = await createWebhook(key, 'customers', ['customer.created'])
    await fanOutAll(server.app.db)
    const before = await totalEvents(taxes)
    expect(before).toBe(0)

    const tax = await createTax(key)
    expect(tax.fanout_pending).toBe(1)
    expect(await receiversOf(tax.id)).toEqual([])
    const customer = await createCustomer(key)
    expect(customer.fanout_pending).toBe(1)

    await fanOutAll(server.app.db)
    const taxReceivers = await receiversOf(tax.id)
    expect(taxReceivers).toHaveLength(INLINE_FANOUT_MAX)
    expect(taxReceivers).toContain(taxes)
    expect(taxReceivers).not.toContain(customers)
    const customerReceivers = await receiversOf(customer.id)
    expect(customerReceivers).toHaveLength(INLINE_FANOUT_MAX)
    expect(customerReceivers).toContain(customers)
    expect(customerReceivers).not.toContain(taxes)
    expect(await typesDeliveredTo(taxes)).toEqual(['tax.created'])
    expect(await typesDeliveredTo(customers)).toEqual(['customer.created'])
    expect([await totalEvents(taxes), await totalEvents(customers)]).toEqual([1, 1])
  })

  it('the filter is read when the deliveries are written: a PATCH between the event and its fan-out applies', async () => {
    const key = await bigApplication(INLINE_FANOUT_MAX)
    const late = await createWebhook(key, 'late', ['customer.created'])
    await fanOutAll(server.app.db)
    const tax = await createTax(key)
    expect(tax.fanout_pending).toBe(1)
    expect((await server.request('PATCH', `/api/v0/webhooks/${late}`, { key, body: { event_types: ['tax.created'] } })).status).toBe(200)
    await fanOutAll(server.app.db)
    expect(await receiversOf(tax.id)).toContain(late)
    expect(await typesDeliveredTo(late)).toEqual(['tax.created'])
  })

  it('POST /webhooks/{id}/test is written at once and sent whatever the webhook lists', async () => {
    const key = await bigApplication(INLINE_FANOUT_MAX)
    const id = await createWebhook(key, 'tested', ['tax.deleted'])
    expect((await server.request('POST', `/api/v0/webhooks/${id}/test`, { key })).status).toBe(202)
    expect(await typesDeliveredTo(id)).toEqual(['webhook.test'])
  })
})

describe('end to end, through a delivering server', () => {
  let receiver: Receiver
  let delivering: TestServer
  beforeAll(async () => {
    receiver = await startReceiver()
    delivering = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 2000, pollIntervalMs: 20 } })
  })
  afterAll(async () => {
    await delivering.close()
    await receiver.close()
  })

  it('the receiver of a filtered webhook gets only the types it lists; its statistics count them', async () => {
    const key = await delivering.createKey()
    const filtered = await delivering.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'f', url: receiver.url('/filtered'), event_types: ['customer.created'] } })
    expect((await delivering.request('POST', '/api/v0/webhooks', { key, body: { name: 'a', url: receiver.url('/all') } })).status).toBe(201)
    expect((await delivering.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20 } })).status).toBe(201)
    expect((await delivering.request('POST', '/api/v0/customers', { key, body: { first_name: 'A', last_name: 'B', phone_number: '+15550100' } })).status).toBe(201)
    const typesAt = (path: string) => receiver.arrivals.filter((a) => a.complete && a.path === path).map((a) => (JSON.parse(a.body) as { type: string }).type)
    await expect.poll(() => typesAt('/all').sort(), { timeout: 10_000 }).toEqual(['customer.created', 'tax.created', 'webhook.created'])
    await expect.poll(() => typesAt('/filtered'), { timeout: 10_000 }).toEqual(['customer.created'])
    const stats = async () => (await delivering.request<{ delivery_stats: object }>('GET', `/api/v0/webhooks/${filtered.body.id}`, { key })).body.delivery_stats
    await expect.poll(stats, { timeout: 10_000 }).toMatchObject({ total_events: 1, successful_deliveries: 1, failed_deliveries: 0 })
  })
})
