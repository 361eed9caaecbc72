import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FANOUT_LIMITS, INLINE_FANOUT_MAX } from '../../src/events/events-repository.js'
import { newId, nowIso } from '../../src/db/time.js'
import { fanOut, fanOutAll } from '../helpers/fan-out.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Receiver, startReceiver } from '../receiver.js'
import { TOTAL_EVENTS } from '../../src/resources/webhooks/repository.js'

// An event's deliveries are written inside the write that made it only for an application with at
// most INLINE_FANOUT_MAX active webhooks; above that the event commits marked pending and a
// dispatcher writes them (EventsRepository.fanOutPending), so a write's cost does not grow with
// its application's webhooks. These tests drive the fan-out by hand (dispatcher off) to see the
// state between the two steps, and once end to end through a delivering server.

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server.close()
})

async function createWebhooks(key: TestKey, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const res = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: `w${i}`, url: `https://example.com/${i}` } })
    expect(res.status).toBe(201)
    ids.push(res.body.id)
  }
  return ids
}

async function createTax(key: TestKey): Promise<string> {
  const res = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20 } })
  expect(res.status).toBe(201)
  const event = await server.app.db
    .selectFrom('events')
    .select('id')
    .where('app_id', '=', key.appId)
    .where('type', '=', 'tax.created')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow()
  return event.id
}

const eventRow = (id: string) => server.app.db.selectFrom('events').select(['fanout_pending']).where('id', '=', id).executeTakeFirstOrThrow()
const deliveriesOfEvent = (id: string) =>
  server.app.db.selectFrom('deliveries').select(['webhook_id', 'status', 'next_attempt_at']).where('event_id', '=', id).orderBy('webhook_id').execute()
const pendingOf = async (appId: string) =>
  (await server.app.db.selectFrom('events').select('id').where('app_id', '=', appId).where('fanout_pending', '=', 1).execute()).length
const totalEvents = async (webhookId: string) =>
  (await server.app.db.selectFrom('webhooks').select(TOTAL_EVENTS).where('id', '=', webhookId).executeTakeFirstOrThrow()).total_events

describe('where an event fans out', () => {
  it(`${INLINE_FANOUT_MAX} active webhooks: the write itself writes one delivery per webhook`, async () => {
    const key = await server.createKey()
    const webhooks = await createWebhooks(key, INLINE_FANOUT_MAX)
    const event = await createTax(key)
    expect(await eventRow(event)).toEqual({ fanout_pending: 0 })
    expect((await deliveriesOfEvent(event)).map((d) => d.webhook_id)).toEqual([...webhooks].sort())
  })

  it(`${INLINE_FANOUT_MAX + 1} active webhooks: the write commits the event pending and no delivery; the fan-out writes one per webhook and counts it`, async () => {
    const key = await server.createKey()
    const webhooks = await createWebhooks(key, INLINE_FANOUT_MAX + 1)
    await fanOutAll(server.app.db) // the last webhook's own webhook.created
    const before = await totalEvents(webhooks[0] ?? '')
    const event = await createTax(key)
    expect(await eventRow(event)).toEqual({ fanout_pending: 1 })
    expect(await deliveriesOfEvent(event)).toEqual([])
    expect(await totalEvents(webhooks[0] ?? '')).toBe(before)

    await fanOutAll(server.app.db)
    expect(await eventRow(event)).toEqual({ fanout_pending: 0 })
    const deliveries = await deliveriesOfEvent(event)
    expect(deliveries.map((d) => d.webhook_id)).toEqual([...webhooks].sort())
    expect(new Set(deliveries.map((d) => d.status))).toEqual(new Set(['pending']))
    expect(await totalEvents(webhooks[0] ?? '')).toBe(before + 1)
  })

  it('deactivating a webhook while events wait does not let a later write overtake them: it waits too, and each webhook gets both in order', async () => {
    const key = await server.createKey()
    const webhooks = await createWebhooks(key, INLINE_FANOUT_MAX + 1)
    const first = await createTax(key)
    const [stopped, ...kept] = webhooks
    expect((await server.request('PATCH', `/api/v0/webhooks/${stopped ?? ''}`, { key, body: { isActive: false } })).status).toBe(200)
    const second = await createTax(key)
    // INLINE_FANOUT_MAX active webhooks now, but the first event still waits: so does the second.
    expect(await eventRow(second)).toEqual({ fanout_pending: 1 })

    await fanOutAll(server.app.db)
    const firstDeliveries = await deliveriesOfEvent(first)
    const secondDeliveries = await deliveriesOfEvent(second)
    // Fanned out after the deactivation: the stopped webhook gets neither.
    expect(firstDeliveries.map((d) => d.webhook_id)).toEqual([...kept].sort())
    expect(secondDeliveries.map((d) => d.webhook_id)).toEqual([...kept].sort())
    for (const [i, delivery] of firstDeliveries.entries()) expect(delivery.next_attempt_at <= (secondDeliveries[i]?.next_attempt_at ?? '')).toBe(true)
    expect(await pendingOf(key.appId)).toBe(0)
  })

  it('a webhook deleted before the fan-out gets nothing; one created after the event gets nothing of it, only its own later events', async () => {
    const key = await server.createKey()
    const webhooks = await createWebhooks(key, INLINE_FANOUT_MAX + 1)
    const event = await createTax(key)
    const [deleted, ...kept] = webhooks
    expect((await server.request('DELETE', `/api/v0/webhooks/${deleted ?? ''}`, { key })).status).toBe(200)
    const [late] = await createWebhooks(key, 1)

    await fanOutAll(server.app.db)
    expect((await deliveriesOfEvent(event)).map((d) => d.webhook_id)).toEqual([...kept].sort())
    const lateDeliveries = await server.app.db.selectFrom('deliveries').select('event_id').where('webhook_id', '=', late ?? '').execute()
    // its own webhook.created, which came after it existed
    expect(lateDeliveries).toHaveLength(1)
    expect(lateDeliveries[0]?.event_id).not.toBe(event)
  })
})

describe('the deferred fan-out’s budgets', () => {
  /** An application with `webhooks` active webhooks and `events` pending events, written directly (fast). */
  async function seedPending(webhooks: number, events: number): Promise<{ appId: string; webhookIds: string[] }> {
    const appId = (await server.app.repos.apps.createApp('fan-out')).id
    const webhookIds: string[] = []
    for (let i = 0; i < webhooks; i++) {
      const row = await new WebhooksRepository(server.app.db).create(appId, { name: `w${i}`, url: `https://example.com/${i}`, isActive: true, encrypted: false, signingSecret: 'whsec_x' })
      webhookIds.push(row.id)
    }
    const rows = []
    for (let i = 0; i < events; i++) {
      const id = newId()
      const createdAt = nowIso()
      rows.push({ id, app_id: appId, type: 'tax.created', payload: JSON.stringify({ id, type: 'tax.created', created_at: createdAt, data: {} }), created_at: createdAt, fanout_pending: 1 })
    }
    for (let i = 0; i < rows.length; i += 200) await server.app.db.insertInto('events').values(rows.slice(i, i + 200)).execute()
    return { appId, webhookIds }
  }

  it(`takes floor(${FANOUT_LIMITS.rowsPerApp} / webhooks) events of an application per transaction, not one more`, async () => {
    await fanOutAll(server.app.db)
    const webhooks = INLINE_FANOUT_MAX + 1
    const perTransaction = Math.floor(FANOUT_LIMITS.rowsPerApp / webhooks)
    const app = await seedPending(webhooks, perTransaction + 1)
    const result = await fanOut(server.app.db)
    expect(result).toMatchObject({ events: perTransaction, deliveries: perTransaction * webhooks, more: true, lastAppId: app.appId })
    expect(await pendingOf(app.appId)).toBe(1)
    expect(await fanOut(server.app.db, app.appId)).toMatchObject({ events: 1, deliveries: webhooks, more: false })
    expect(await pendingOf(app.appId)).toBe(0)
  })

  it('one event per transaction at least, however many webhooks', async () => {
    await fanOutAll(server.app.db)
    const app = await seedPending(FANOUT_LIMITS.rowsPerApp + 1, 2)
    expect(await fanOut(server.app.db)).toMatchObject({ events: 1, deliveries: FANOUT_LIMITS.rowsPerApp + 1, more: true })
    expect(await pendingOf(app.appId)).toBe(1)
  })

  it('serves applications in turn: a big backlog does not hold back another application’s event', async () => {
    await fanOutAll(server.app.db)
    const webhooks = INLINE_FANOUT_MAX + 1
    // More than one whole transaction's budget, all older than the other application's event.
    const big = await seedPending(webhooks, Math.ceil(FANOUT_LIMITS.rows / webhooks) * 2)
    const small = await seedPending(webhooks, 1)
    const first = await fanOut(server.app.db)
    expect(first.more).toBe(true)
    expect(await pendingOf(small.appId)).toBe(0)
    expect(await pendingOf(big.appId)).toBeGreaterThan(0)
  })
})

describe('deferred fan-out, end to end', () => {
  let receiver: Receiver
  let delivering: TestServer
  beforeAll(async () => {
    receiver = await startReceiver()
    delivering = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 2000, pollIntervalMs: 50 } })
  })
  afterAll(async () => {
    await delivering.close()
    await receiver.close()
  })

  it(`an application with ${INLINE_FANOUT_MAX + 1} webhooks gets every event at every webhook, counted in its statistics`, async () => {
    const key = await delivering.createKey()
    const paths = Array.from({ length: INLINE_FANOUT_MAX + 1 }, (_, i) => `/fanout/${i}`)
    const ids: string[] = []
    for (const path of paths) {
      const res = await delivering.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: path, url: receiver.url(path) } })
      expect(res.status).toBe(201)
      ids.push(res.body.id)
    }
    expect((await delivering.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20 } })).status).toBe(201)
    const taxArrivedAt = () => new Set(receiver.arrivals.filter((arrival) => arrival.complete && (JSON.parse(arrival.body) as { type: string }).type === 'tax.created').map((arrival) => arrival.path))
    await expect.poll(() => [...taxArrivedAt()].sort(), { timeout: 10_000 }).toEqual([...paths].sort())
    const last = ids.at(-1) ?? ''
    const stats = async () => (await delivering.request<{ delivery_stats: { total_events: number; successful_deliveries: number } }>('GET', `/api/v0/webhooks/${last}`, { key })).body.delivery_stats
    // its own webhook.created (the first deferred event) and the tax
    await expect.poll(stats, { timeout: 10_000 }).toMatchObject({ total_events: 2, successful_deliveries: 2 })
  })
})
