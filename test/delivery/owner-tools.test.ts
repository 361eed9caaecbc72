import type { CreatedWebhook } from '../../src/resources/webhooks/schemas.js'
import type { Delivery } from '../../src/resources/webhooks/delivery-schemas.js'
import { compactDecrypt } from 'jose'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENCRYPTION_INFO } from '../../src/delivery/signing.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { waitUntil } from '../processes.js'
import { type Arrival, type Receiver, startReceiver } from '../receiver.js'

/** A webhook as its creation answers it: with its signing secret. */
type Webhook = CreatedWebhook & { signing_secret: string }

/** The owner's tools with a real dispatcher and receiver: rotation's two signatures, resends, test events. */


let receiver: Receiver
let server: TestServer
let key: TestKey
beforeAll(async () => {
  receiver = await startReceiver()
  // One automatic retry after 50 ms, then failed: short enough to watch, long enough to tell from a resend.
  server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 1000, pollIntervalMs: 20 }, delivery: { retrySchedule: [50] } })
  key = await server.createKey()
})
afterAll(async () => {
  await server.close()
  await receiver.close()
})

async function createWebhook(path: string, extra: Record<string, unknown> = {}): Promise<Webhook> {
  const res = await server.request<Webhook>('POST', '/api/v0/webhooks', { key, body: { name: path, url: receiver.url(path), ...extra } })
  expect(res.status).toBe(201)
  return res.body
}

function signatureHeaders(arrival: Arrival): Record<string, string> {
  return {
    'webhook-id': String(arrival.headers['webhook-id']),
    'webhook-timestamp': String(arrival.headers['webhook-timestamp']),
    'webhook-signature': String(arrival.headers['webhook-signature']),
  }
}

async function deliveryOf(webhookId: string, deliveryId: string): Promise<Delivery> {
  return (await server.request<Delivery>('GET', `/api/v0/webhooks/${webhookId}/deliveries/${deliveryId}`, { key })).body
}

function settled(webhookId: string, deliveryId: string, status: string, attempts: number): Promise<Delivery> {
  return waitUntil(`delivery ${status} after ${attempts} attempts`, async () => {
    const delivery = await deliveryOf(webhookId, deliveryId)
    return delivery.status === status && delivery.attempt_log.length === attempts ? delivery : undefined
  })
}

describe('secret rotation', () => {
  it('for 24 hours each delivery carries v1,<new> v1,<old>; standardwebhooks verifies it with either secret', async () => {
    const webhook = await createWebhook('/rotate')
    await receiver.waitFor(1, { path: '/rotate' })
    const rotated = await server.request<{ signing_secret: string }>('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key })
    expect(rotated.status).toBe(200)
    // The rotation's own webhook.updated event is the first delivery signed twice.
    const [, arrival] = await receiver.waitFor(2, { path: '/rotate' })
    if (arrival === undefined) throw new Error('no arrival')
    const signatures = String(arrival.headers['webhook-signature']).split(' ')
    expect(signatures).toHaveLength(2)
    for (const signature of signatures) expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    const headers = signatureHeaders(arrival)
    for (const secret of [rotated.body.signing_secret, webhook.signing_secret]) {
      expect((new StandardWebhook(secret).verify(arrival.body, headers) as { type: string }).type).toBe('webhook.updated')
    }
    // The first signature is the new secret's.
    const newOnly = { ...headers, 'webhook-signature': signatures[0] ?? '' }
    expect(() => new StandardWebhook(rotated.body.signing_secret).verify(arrival.body, newOnly)).not.toThrow()
    expect(() => new StandardWebhook(webhook.signing_secret).verify(arrival.body, newOnly)).toThrow()

    // Once the grace period is over: one signature, the old secret no longer verifies.
    await server.app.db.updateTable('webhooks').set({ previous_secret_expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', webhook.id).execute()
    await server.request('POST', `/api/v0/webhooks/${webhook.id}/test`, { key })
    const [, , late] = await receiver.waitFor(3, { path: '/rotate' })
    if (late === undefined) throw new Error('no arrival')
    expect(String(late.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(() => new StandardWebhook(rotated.body.signing_secret).verify(late.body, signatureHeaders(late))).not.toThrow()
    expect(() => new StandardWebhook(webhook.signing_secret).verify(late.body, signatureHeaders(late))).toThrow()
  })

  it('encrypted: the payload is encrypted with the new secret, and signed with both', async () => {
    const webhook = await createWebhook('/rotate-encrypted', { encrypted: true })
    await receiver.waitFor(1, { path: '/rotate-encrypted' })
    const rotated = await server.request<{ signing_secret: string }>('POST', `/api/v0/webhooks/${webhook.id}/secret/rotate`, { key })
    const [, arrival] = await receiver.waitFor(2, { path: '/rotate-encrypted' })
    if (arrival === undefined) throw new Error('no arrival')
    for (const secret of [rotated.body.signing_secret, webhook.signing_secret]) {
      expect(() => new StandardWebhook(secret).verify(arrival.body, signatureHeaders(arrival), { jsonParse: false })).not.toThrow()
    }
    const { hkdfSync } = await import('node:crypto')
    const keyOf = (secret: string) => new Uint8Array(hkdfSync('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'), Buffer.alloc(0), ENCRYPTION_INFO, 32))
    const { plaintext } = await compactDecrypt(arrival.body, keyOf(rotated.body.signing_secret))
    expect((JSON.parse(new TextDecoder().decode(plaintext)) as { type: string }).type).toBe('webhook.updated')
    await expect(compactDecrypt(arrival.body, keyOf(webhook.signing_secret))).rejects.toThrow()
  })
})

describe('test events', () => {
  it('reach this webhook only, signed like any other event', async () => {
    const target = await createWebhook('/test-target')
    await createWebhook('/test-bystander')
    await receiver.waitFor(2, { path: '/test-target' })
    await receiver.waitFor(1, { path: '/test-bystander' })
    const res = await server.request<Delivery>('POST', `/api/v0/webhooks/${target.id}/test`, { key })
    expect(res.status).toBe(202)
    const arrivals = await receiver.waitFor(3, { path: '/test-target' })
    const arrival = arrivals[2]
    if (arrival === undefined) throw new Error('no arrival')
    const envelope = new StandardWebhook(target.signing_secret).verify(arrival.body, signatureHeaders(arrival)) as { id: string; type: string; data: { id: string } }
    expect(envelope).toMatchObject({ id: res.body.event.id, type: 'webhook.test', data: { id: target.id } })
    const delivered = await settled(target.id, res.body.id, 'succeeded', 1)
    expect(delivered.attempt_log[0]).toMatchObject({ attempt: 1, outcome: 'succeeded', status_code: 200 })
    // The bystander got its own webhook.created and nothing else.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.arrivals.filter((a) => a.path === '/test-bystander')).toHaveLength(1)
  })
})

describe('resends', () => {
  it('a failed delivery is attempted again on request: one attempt, logged and counted; a failed resend is not retried', async () => {
    let answer = 500
    receiver.setAnswer((arrival) => (arrival.path === '/resend' ? { status: answer, body: `answer ${answer}` } : { status: 200 }))
    try {
      const webhook = await createWebhook('/resend')
      const [first] = (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries`, { key })).body
      if (first === undefined) throw new Error('no delivery')
      // The automatic schedule: 1 attempt + 1 retry, then failed.
      const failed = await settled(webhook.id, first.id, 'failed', 2)
      expect(failed.attempt_log.map((a) => [a.attempt, a.outcome, a.status_code, a.response_body])).toEqual([
        [1, 'failed', 500, 'answer 500'],
        [2, 'failed', 500, 'answer 500'],
      ])

      answer = 200
      const resent = await server.request<Delivery>('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${first.id}/retry`, { key })
      expect(resent.status).toBe(202)
      const succeeded = await settled(webhook.id, first.id, 'succeeded', 3)
      expect(succeeded.attempts).toBe(3)
      expect(succeeded.attempt_log[2]).toMatchObject({ attempt: 3, outcome: 'succeeded', status_code: 200, response_body: 'answer 200' })
      // The same event, under the same webhook-id.
      const arrivals = receiver.arrivals.filter((a) => a.path === '/resend')
      expect(new Set(arrivals.map((a) => a.headers['webhook-id']))).toEqual(new Set([first.event.id]))
      expect(arrivals).toHaveLength(3)

      // A succeeded delivery can be resent too; a failing resend ends failed at once (no retry after 50 ms).
      answer = 503
      expect((await server.request('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${first.id}/retry`, { key })).status).toBe(202)
      const refailed = await settled(webhook.id, first.id, 'failed', 4)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect((await deliveryOf(webhook.id, first.id)).attempt_log).toHaveLength(4)
      expect(refailed.attempt_log[3]).toMatchObject({ attempt: 4, outcome: 'failed', status_code: 503 })

      const stats = (await server.request<Webhook>('GET', `/api/v0/webhooks/${webhook.id}`, { key })).body.delivery_stats
      expect(stats).toMatchObject({ total_events: 1, successful_deliveries: 1, failed_deliveries: 3 })
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  })

  it('deleting the webhook stops a resend on the wire, as it stops everything else', async () => {
    const webhook = await createWebhook('/resend-delete')
    const [delivery] = (await server.request<Delivery[]>('GET', `/api/v0/webhooks/${webhook.id}/deliveries`, { key })).body
    if (delivery === undefined) throw new Error('no delivery')
    await settled(webhook.id, delivery.id, 'succeeded', 1)
    receiver.setAnswer((arrival) => (arrival.path === '/resend-delete' ? 'hang' : { status: 200 }))
    try {
      expect((await server.request('POST', `/api/v0/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { key })).status).toBe(202)
      await receiver.waitFor(2, { path: '/resend-delete' })
      expect((await server.request('DELETE', `/api/v0/webhooks/${webhook.id}`, { key })).status).toBe(200)
      const aborted = receiver.arrivals.filter((a) => a.path === '/resend-delete')[1]
      await waitUntil('the resend aborted', () => (aborted?.aborted === true ? true : undefined), 2000)
      const row = await waitUntil('the attempt recorded as canceled', async () => {
        const attempts = await server.app.db.selectFrom('delivery_attempts').select(['attempt', 'outcome']).where('delivery_id', '=', delivery.id).orderBy('attempt').execute()
        return attempts.length === 2 ? attempts : undefined
      })
      expect(row).toEqual([
        { attempt: 1, outcome: 'succeeded' },
        { attempt: 2, outcome: 'canceled' },
      ])
      const stored = await server.app.db.selectFrom('deliveries').select(['status']).where('id', '=', delivery.id).executeTakeFirstOrThrow()
      expect(stored.status).toBe('canceled')
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  })
})
