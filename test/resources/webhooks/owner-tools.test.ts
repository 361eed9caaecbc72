import type { CreatedWebhook as Webhook } from '../../../src/resources/webhooks/schemas.js'
import type { Delivery } from '../../../src/resources/webhooks/delivery-schemas.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../../helper.js'

/**
 * The webhook owner's routes without a dispatcher (route tests; delivery itself is in
 * test/delivery/owner-tools.test.ts): secrets, the delivery log, resends and test events.
 */


const SECRET_FORMAT = /^whsec_[A-Za-z0-9+/]{43}=$/
const secretOf = (bytes: number, fill = 7) => `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`

let server: TestServer
let key: TestKey
let other: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
  other = await server.createKey()
})
afterAll(async () => server.close())

async function createWebhook(extra: Record<string, unknown> = {}, as: TestKey = key): Promise<Webhook> {
  const res = await server.request<Webhook>('POST', '/api/v0/webhooks', { key: as, body: { name: 'w', url: 'https://example.com/hook', ...extra } })
  expect(res.status).toBe(201)
  return res.body
}

async function storedSecrets(id: string) {
  return server.app.db
    .selectFrom('webhooks')
    .select(['signing_secret', 'previous_signing_secret', 'previous_secret_expires_at', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
}

async function deletedAtOf(id: string): Promise<string> {
  const row = await server.app.db.selectFrom('webhooks').select('deleted_at').where('id', '=', id).executeTakeFirstOrThrow()
  if (row.deleted_at === null) throw new Error(`webhook ${id} is not deleted`)
  return row.deleted_at
}

async function eventCount(appId: string): Promise<number> {
  const rows = await server.app.db.selectFrom('events').select('id').where('app_id', '=', appId).execute()
  return rows.length
}

describe('GET /api/v0/webhooks/{id}/secret', () => {
  it('answers the secret creation generated (which the webhook object never carries)', async () => {
    const webhook = await createWebhook()
    expect(webhook.signing_secret).toMatch(SECRET_FORMAT)
    const res = await server.request('GET', `/api/v0/webhooks/${webhook.id}/secret`, { key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ signing_secret: webhook.signing_secret })
    const read = await server.request<Record<string, unknown>>('GET', `/api/v0/webhooks/${webhook.id}`, { key })
    expect(read.body).not.toHaveProperty('signing_secret')
  })

  it('answers the secret the caller chose', async () => {
    const chosen = secretOf(32)
    const webhook = await createWebhook({ signing_secret: chosen })
    expect(webhook).not.toHaveProperty('signing_secret')
    expect((await server.request('GET', `/api/v0/webhooks/${webhook.id}/secret`, { key })).body).toEqual({ signing_secret: chosen })
  })

  it('404 for a missing, deleted or foreign webhook; 400 for a malformed id', async () => {
    const webhook = await createWebhook()
    const foreign = await createWebhook({}, other)
    expect((await server.request('DELETE', `/api/v0/webhooks/${webhook.id}`, { key })).status).toBe(200)
    for (const id of [MISSING_UUID, webhook.id, foreign.id]) {
      const res = await server.request('GET', `/api/v0/webhooks/${id}/secret`, { key })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
    }
    const bad = await server.request('GET', '/api/v0/webhooks/not-a-uuid/secret', { key })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Invalid webhook ID format' })
  })
})

describe('POST /api/v0/webhooks/{id}/secret/rotate', () => {
  it('without a body: generates a new secret, answers it, keeps the old one for 24 hours and emits webhook.updated', async () => {
    const webhook = await createWebhook()
    const events = await eventCount(key.appId)
    const before = Date.now()
    const res = await server.request<{ signing_secret: string }>('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body)).toEqual(['signing_secret'])
    expect(res.body.signing_secret).toMatch(SECRET_FORMAT)
    expect(res.body.signing_secret).not.toBe(webhook.signing_secret)
    expect((await server.request('GET', `/api/v0/webhooks/${webhook.id}/secret`, { key })).body).toEqual(res.body)
    const stored = await storedSecrets(webhook.id)
    expect(stored.previous_signing_secret).toBe(webhook.signing_secret)
    const expires = Date.parse(String(stored.previous_secret_expires_at))
    expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 1000)
    expect(await eventCount(key.appId)).toBe(events + 1)
  })

  it('an empty JSON body, {} and {"signing_secret": null} all generate', async () => {
    const webhook = await createWebhook()
    const seen = new Set<string>()
    for (const body of ['', '{}', '{"signing_secret":null}']) {
      const res = await server.request<{ signing_secret: string }>('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key, body })
      expect(res.status, body).toBe(200)
      expect(res.body.signing_secret).toMatch(SECRET_FORMAT)
      seen.add(res.body.signing_secret)
    }
    expect(seen.size).toBe(3)
  })

  it('takes a chosen secret: 24 and 64 bytes accepted, 23 and 65 refused with nothing changed', async () => {
    const webhook = await createWebhook()
    for (const bytes of [24, 64]) {
      const chosen = secretOf(bytes, bytes)
      const res = await server.request('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key, body: { signing_secret: chosen } })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ signing_secret: chosen })
    }
    const kept = await storedSecrets(webhook.id)
    const events = await eventCount(key.appId)
    for (const secret of [secretOf(23), secretOf(65), 'whsec_', 'not-a-secret']) {
      const res = await server.request('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key, body: { signing_secret: secret } })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'signing_secret must be whsec_ followed by base64 of 24 to 64 bytes' })
    }
    const unknown = await server.request('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key, body: { secret: secretOf(32) } })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ message: 'property secret should not exist' })
    expect(await storedSecrets(webhook.id)).toEqual(kept)
    expect(await eventCount(key.appId)).toBe(events)
  })

  it('a second rotation keeps the secret it replaced (the first rotation\'s), not the original', async () => {
    const webhook = await createWebhook()
    const first = await server.request<{ signing_secret: string }>('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key })
    await server.request('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key })
    expect((await storedSecrets(webhook.id)).previous_signing_secret).toBe(first.body.signing_secret)
  })

  it('PATCH signing_secret rotates the same way; setting the current secret again changes nothing', async () => {
    const webhook = await createWebhook()
    const next = secretOf(32, 9)
    expect((await server.request('PATCH', `/api/v0/webhooks/${webhook.id}`, { key, body: { signing_secret: next } })).status).toBe(200)
    const rotated = await storedSecrets(webhook.id)
    expect(rotated.signing_secret).toBe(next)
    expect(rotated.previous_signing_secret).toBe(webhook.signing_secret)
    expect((await server.request('PATCH', `/api/v0/webhooks/${webhook.id}`, { key, body: { signing_secret: next } })).status).toBe(200)
    const again = await storedSecrets(webhook.id)
    expect(again.previous_signing_secret).toBe(webhook.signing_secret)
    expect(again.previous_secret_expires_at).toBe(rotated.previous_secret_expires_at)
  })

  it('404 for a missing, deleted or foreign webhook, and the foreign one keeps its secret', async () => {
    const deleted = await createWebhook()
    await server.request('DELETE', `/api/v0/webhooks/${deleted.id}`, { key })
    const foreign = await createWebhook({}, other)
    for (const id of [MISSING_UUID, deleted.id, foreign.id]) {
      const res = await server.request('POST', `/api/v0/webhooks/${id}/secret/rotate`, { key })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
    }
    expect((await server.request('GET', `/api/v0/webhooks/${foreign.id}/secret`, { key: other })).body).toEqual({ signing_secret: foreign.signing_secret })
  })
})

describe('the delivery log: GET /api/v0/webhooks/{id}/deliveries[/{deliveryId}]', () => {
  let webhook: Webhook
  let deliveries: Delivery[]
  beforeAll(async () => {
    const owner = await server.createKey()
    key = owner
    webhook = await createWebhook()
    for (let i = 0; i < 3; i++) expect((await server.request('POST', '/api/v0/taxes', { key, body: { name: `t${i}`, percentage: i } })).status).toBe(201)
    const res = await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries?take=100`, { key })
    expect(res.status).toBe(200)
    deliveries = res.body
  })

  it('lists the webhook\'s deliveries newest first, each with its event, state and attempt log', async () => {
    expect(deliveries.map((d) => d.event.type)).toEqual(['tax.created', 'tax.created', 'tax.created', 'webhook.created'])
    for (const delivery of deliveries) {
      expect(Object.keys(delivery).sort()).toEqual(['attempt_log', 'attempts', 'created_at', 'event', 'held_back_until', 'id', 'next_attempt_at', 'status', 'updated_at', 'webhook_id'])
      expect(delivery).toMatchObject({ webhook_id: webhook.id, status: 'pending', attempts: 0, held_back_until: null, attempt_log: [] })
      expect(delivery.next_attempt_at).not.toBeNull()
    }
    const events = await server.app.db.selectFrom('events').select(['id', 'created_at']).where('app_id', '=', key.appId).execute()
    expect(new Set(deliveries.map((d) => d.event.id))).toEqual(new Set(events.map((e) => e.id)))
  })

  it('pages with skip and take at their bounds, and filters by status', async () => {
    const page = await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries?skip=1&take=2`, { key })
    expect(page.body.map((d) => d.id)).toEqual(deliveries.slice(1, 3).map((d) => d.id))
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries`, { key })).body).toHaveLength(4)
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries?take=1`, { key })).body).toHaveLength(1)
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries?skip=0&take=100`, { key })).status).toBe(200)
    for (const [query, message] of [
      ['take=0', 'take must not be less than 1'],
      ['take=101', 'take must not be greater than 100'],
      ['skip=-1', 'skip must not be less than 0'],
      ['status=done', 'status must be one of the following values: pending, succeeded, failed, canceled'],
    ] as const) {
      const res = await server.request('GET', `/api/v0/webhooks/${webhook.id}/deliveries?${query}`, { key })
      expect(res.status, query).toBe(400)
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message })
    }
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries?status=pending`, { key })).body).toHaveLength(4)
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries?status=failed`, { key })).body).toEqual([])
  })

  it('one delivery answers what the list shows; a delivery of another webhook is not found through this one', async () => {
    const [first] = deliveries
    if (first === undefined) throw new Error('no delivery')
    const one = await server.request('GET', `/api/v0/webhooks/${webhook.id}/deliveries/${first.id}`, { key })
    expect(one.status).toBe(200)
    expect(one.body).toEqual(first)
    const sibling = await createWebhook()
    for (const path of [`/api/v0/webhooks/${sibling.id}/deliveries/${first.id}`, `/api/v0/webhooks/${webhook.id}/deliveries/${MISSING_UUID}`]) {
      const res = await server.request('GET', path, { key })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Delivery not found' })
    }
    const bad = await server.request('GET', `/api/v0/webhooks/${webhook.id}/deliveries/nope`, { key })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Invalid delivery ID format' })
  })

  it("a deleted webhook's log stays readable, read-only: its deliveries as the deletion left them (canceled), paged and filtered", async () => {
    const doomed = await createWebhook()
    for (let i = 0; i < 2; i++) expect((await server.request('POST', '/api/v0/taxes', { key, body: { name: `d${i}`, percentage: i } })).status).toBe(201)
    const before = (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${doomed.id}/deliveries`, { key })).body
    expect(before.map((d) => d.status)).toEqual(['pending', 'pending', 'pending'])
    expect((await server.request('DELETE', `/api/v0/webhooks/${doomed.id}`, { key })).status).toBe(200)

    const after = await server.request<Delivery[]>('GET', `/api/v0/webhooks/${doomed.id}/deliveries`, { key })
    expect(after.status).toBe(200)
    // The same deliveries in the same order; the deletion canceled what was pending.
    expect(after.body.map((d) => d.id)).toEqual(before.map((d) => d.id))
    for (const delivery of after.body) expect(delivery).toMatchObject({ webhook_id: doomed.id, status: 'canceled', next_attempt_at: null, held_back_until: null })
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${doomed.id}/deliveries?status=canceled&skip=1&take=1`, { key })).body.map((d) => d.id)).toEqual([
      before[1]?.id,
    ])
    expect((await server.request<Delivery[]>('GET', `/api/v0/webhooks/${doomed.id.toUpperCase()}/deliveries?status=pending`, { key })).body).toEqual([])
    const [first] = after.body
    if (first === undefined) throw new Error('no delivery')
    const one = await server.request('GET', `/api/v0/webhooks/${doomed.id}/deliveries/${first.id}`, { key })
    expect(one.status).toBe(200)
    expect(one.body).toEqual(first)
    const missing = await server.request('GET', `/api/v0/webhooks/${doomed.id}/deliveries/${MISSING_UUID}`, { key })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Delivery not found' })

    // The webhook itself is gone from every other route.
    for (const [method, path] of [
      ['GET', `/api/v0/webhooks/${doomed.id}`],
      ['PATCH', `/api/v0/webhooks/${doomed.id}`],
      ['DELETE', `/api/v0/webhooks/${doomed.id}`],
      ['GET', `/api/v0/webhooks/${doomed.id}/secret`],
      ['POST', `/api/v0/webhooks/${doomed.id}/secret/rotate`],
    ] as const) {
      const res = await server.request(method, path, { key, ...(method === 'PATCH' ? { body: { name: 'back' } } : {}) })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
    }
    const listed = await server.request<Webhook[]>('GET', '/api/v0/webhooks?take=100', { key })
    expect(listed.body.map((w) => w.id)).not.toContain(doomed.id)
  })

  it("another application's webhook, deleted or not, and its deliveries are 404 as if missing", async () => {
    const live = await createWebhook({}, other)
    const gone = await createWebhook({}, other)
    const [goneDelivery] = (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${gone.id}/deliveries`, { key: other })).body
    if (goneDelivery === undefined) throw new Error('no delivery')
    expect((await server.request('DELETE', `/api/v0/webhooks/${gone.id}`, { key: other })).status).toBe(200)
    // Its owner still reads it.
    expect((await server.request('GET', `/api/v0/webhooks/${gone.id}/deliveries/${goneDelivery.id}`, { key: other })).status).toBe(200)
    for (const path of [
      `/api/v0/webhooks/${live.id}/deliveries`,
      `/api/v0/webhooks/${gone.id}/deliveries`,
      `/api/v0/webhooks/${gone.id}/deliveries/${goneDelivery.id}`,
      `/api/v0/webhooks/${gone.id}/deliveries/${MISSING_UUID}`,
      `/api/v0/webhooks/${MISSING_UUID}/deliveries`,
    ]) {
      const res = await server.request('GET', path, { key })
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
    }
    for (const path of [`/api/v0/webhooks/${gone.id}/deliveries/${goneDelivery.id}/retry`, `/api/v0/webhooks/${gone.id}/test`]) {
      const res = await server.request('POST', path, { key })
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
    }
  })
})

describe('POST /api/v0/webhooks/{id}/deliveries/{deliveryId}/retry', () => {
  async function endedDelivery(status: 'failed' | 'canceled' | 'succeeded'): Promise<{ webhook: Webhook; delivery: Delivery }> {
    const webhook = await createWebhook()
    const [delivery] = (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries`, { key })).body
    if (delivery === undefined) throw new Error('no delivery')
    // As a dispatcher would have left it.
    await server.app.db.updateTable('deliveries').set({ status, attempts: 1 }).where('id', '=', delivery.id).execute()
    return { webhook, delivery }
  }

  it('a failed, canceled or succeeded delivery is due again now, as a resend (202 with the delivery)', async () => {
    for (const status of ['failed', 'canceled', 'succeeded'] as const) {
      const { webhook, delivery } = await endedDelivery(status)
      const before = Date.now()
      const res = await server.request<Delivery>('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { key })
      expect(res.status, status).toBe(202)
      expect(res.body).toMatchObject({ id: delivery.id, status: 'pending', attempts: 1, event: delivery.event })
      expect(Date.parse(String(res.body.next_attempt_at))).toBeGreaterThanOrEqual(before - 5)
      expect(Date.parse(String(res.body.next_attempt_at))).toBeLessThanOrEqual(Date.now() + 5)
      const row = await server.app.db.selectFrom('deliveries').select(['status', 'resend', 'claim_token']).where('id', '=', delivery.id).executeTakeFirstOrThrow()
      expect(row).toEqual({ status: 'pending', resend: 1, claim_token: null })
    }
  })

  it('409 while the delivery is pending (or on the wire), and nothing changes', async () => {
    const webhook = await createWebhook()
    const [delivery] = (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries`, { key })).body
    if (delivery === undefined) throw new Error('no delivery')
    const res = await server.request('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { key })
    expect(res.status).toBe(409)
    expect(res.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: 'Delivery is pending or being attempted: it can be retried once it has succeeded, failed or been canceled',
    })
    expect((await server.request('GET', `/api/v0/webhooks/${webhook.id}/deliveries/${delivery.id}`, { key })).body).toEqual(delivery)
  })

  it('409 when the webhook is inactive or deleted; 404 when the delivery is not its own', async () => {
    const { webhook, delivery } = await endedDelivery('failed')
    await server.request('PATCH', `/api/v0/webhooks/${webhook.id}`, { key, body: { isActive: false } })
    const inactive = await server.request('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { key })
    expect(inactive.status).toBe(409)
    expect(inactive.body).toEqual({ statusCode: 409, error: 'Conflict', message: 'Webhook is inactive: activate it (PATCH isActive true) to send to it' })
    const sibling = await createWebhook()
    const notOwn = await server.request('POST', `/api/v0/webhooks/${sibling.id}/deliveries/${delivery.id}/retry`, { key })
    expect(notOwn.status).toBe(404)
    expect(notOwn.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Delivery not found' })
    await server.request('DELETE', `/api/v0/webhooks/${webhook.id}`, { key })
    const deletedAt = await deletedAtOf(webhook.id)
    const deleted = await server.request('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { key })
    expect(deleted.status).toBe(409)
    expect(deleted.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: `Webhook was deleted at ${deletedAt}: its delivery log stays readable, but nothing can be sent to it`,
    })
    const notOwnOfDeleted = await server.request('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${MISSING_UUID}/retry`, { key })
    expect(notOwnOfDeleted.status).toBe(404)
    expect(notOwnOfDeleted.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Delivery not found' })
    const row = await server.app.db.selectFrom('deliveries').select(['status', 'resend']).where('id', '=', delivery.id).executeTakeFirstOrThrow()
    expect(row).toEqual({ status: 'failed', resend: 0 })
  })
})

describe('POST /api/v0/webhooks/{id}/test', () => {
  it('writes one webhook.test event with one delivery, to this webhook only, and answers 202 with it', async () => {
    const target = await createWebhook()
    const bystander = await createWebhook()
    const bystanderBefore = await server.app.db.selectFrom('deliveries').select('id').where('webhook_id', '=', bystander.id).execute()
    const totalBefore = (await server.request<Webhook>('GET', `/api/v0/webhooks/${target.id}`, { key })).body.delivery_stats.total_events
    const res = await server.request<Delivery>('POST', `/api/v0/webhooks/${target.id}/test`, { key })
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ webhook_id: target.id, status: 'pending', attempts: 0, attempt_log: [], event: { type: 'webhook.test' } })
    const event = await server.app.db.selectFrom('events').selectAll().where('id', '=', res.body.event.id).executeTakeFirstOrThrow()
    expect(JSON.parse(event.payload)).toEqual({ id: event.id, type: 'webhook.test', created_at: event.created_at, data: expect.objectContaining({ id: target.id }) })
    const deliveries = await server.app.db.selectFrom('deliveries').select(['id', 'webhook_id']).where('event_id', '=', event.id).execute()
    expect(deliveries).toEqual([{ id: res.body.id, webhook_id: target.id }])
    expect(await server.app.db.selectFrom('deliveries').select('id').where('webhook_id', '=', bystander.id).execute()).toEqual(bystanderBefore)
    const after = await server.request<Webhook>('GET', `/api/v0/webhooks/${target.id}`, { key })
    expect(after.body.delivery_stats.total_events).toBe(totalBefore + 1)
  })

  it('409 for an inactive or deleted webhook, 404 for a missing or foreign one; no event written', async () => {
    const inactive = await createWebhook({ isActive: false })
    const deleted = await createWebhook()
    await server.request('DELETE', `/api/v0/webhooks/${deleted.id}`, { key })
    const foreign = await createWebhook({}, other)
    const events = await eventCount(key.appId)
    const refused = await server.request('POST', `/api/v0/webhooks/${inactive.id}/test`, { key })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ statusCode: 409, error: 'Conflict', message: 'Webhook is inactive: activate it (PATCH isActive true) to send to it' })
    const refusedDeleted = await server.request('POST', `/api/v0/webhooks/${deleted.id}/test`, { key })
    expect(refusedDeleted.status).toBe(409)
    expect(refusedDeleted.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: `Webhook was deleted at ${await deletedAtOf(deleted.id)}: its delivery log stays readable, but nothing can be sent to it`,
    })
    for (const id of [MISSING_UUID, foreign.id]) {
      const res = await server.request('POST', `/api/v0/webhooks/${id}/test`, { key })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
    }
    expect(await eventCount(key.appId)).toBe(events)
  })
})
