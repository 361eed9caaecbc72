import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, anonymous, call, created, type Fixture, key, receiver, server } from '../../openapi/generated-client.js'

const newWebhook = (body: Record<string, unknown> = {}) => created('/api/v0/webhooks', { name: 'orders', url: receiver.url('/hooks'), ...body })
const WEBHOOK_SHAPE = {
  id: A_UUID,
  name: expect.any(String),
  url: expect.any(String),
  isActive: expect.any(Boolean),
  encrypted: expect.any(Boolean),
  created_at: A_VALID_DATE,
  updated_at: A_VALID_DATE,
  delivery_stats: expect.objectContaining({ total_events: expect.any(Number), successful_deliveries: expect.any(Number), failed_deliveries: expect.any(Number) }),
}
const DELIVERY_SHAPE = {
  id: A_UUID,
  event: { id: A_UUID, type: 'webhook.test', created_at: A_VALID_DATE },
  status: expect.any(String),
  attempts: expect.any(Number),
  created_at: A_VALID_DATE,
  updated_at: A_VALID_DATE,
  attempt_log: expect.any(Array),
}
/** A webhook.test delivery to a new webhook, once it has ended (the receiver answers 200). */
async function deliveredTest(): Promise<{ webhookId: string; deliveryId: string }> {
  const webhook = await newWebhook()
  const sent = await server.request<Fixture>('POST', `/api/v0/webhooks/${webhook.id}/test`, { key })
  expect(sent.status).toBe(202)
  const deadline = Date.now() + 10_000
  for (;;) {
    const res = await server.request<{ status: string }>('GET', `/api/v0/webhooks/${webhook.id}/deliveries/${sent.body.id}`, { key })
    if (res.body.status === 'succeeded') return { webhookId: webhook.id, deliveryId: sent.body.id }
    if (Date.now() > deadline) throw new Error(`delivery ${sent.body.id} still ${res.body.status} after 10 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export function generatedClientCases(): void {
  describe('webhooks', () => {
    it('webhookControllerCreate: POST /webhooks', async () => {
      const { data, response } = await call('webhookControllerCreate', { body: { name: 'orders', url: receiver.url('/created'), isActive: true, encrypted: false } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...WEBHOOK_SHAPE, name: 'orders', url: receiver.url('/created'), isActive: true, encrypted: false })
    })

    it('webhookControllerFindAll: GET /webhooks', async () => {
      const webhook = await newWebhook()
      const { data, response } = await call('webhookControllerFindAll', { query: { skip: 0, take: 100 } })
      expect(response.status).toBe(200)
      expect(data).toEqual(expect.arrayContaining([expect.objectContaining({ ...WEBHOOK_SHAPE, id: webhook.id })]))
    })

    it('webhookControllerFindOne: GET /webhooks/{id}', async () => {
      const webhook = await newWebhook()
      const { data, response } = await call('webhookControllerFindOne', { path: { id: webhook.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...WEBHOOK_SHAPE, id: webhook.id })
    })

    it('webhookControllerUpdate: PATCH /webhooks/{id}', async () => {
      const webhook = await newWebhook()
      const { data, response } = await call('webhookControllerUpdate', { path: { id: webhook.id }, body: { name: 'renamed', isActive: false } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...WEBHOOK_SHAPE, id: webhook.id, name: 'renamed', isActive: false })
    })

    it('webhookControllerRemove: DELETE /webhooks/{id}, then it is gone (the error body as the client parses it)', async () => {
      const webhook = await newWebhook()
      const removed = await call('webhookControllerRemove', { path: { id: webhook.id } })
      expect(removed.response.status).toBe(200)
      expect(removed.data).toMatchObject({ ...WEBHOOK_SHAPE, id: webhook.id })
      const { data, error, response } = await call('webhookControllerFindOne', { path: { id: webhook.id } })
      expect(response.status).toBe(404)
      expect(data).toBeUndefined()
      expect(error).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
    })

    it('webhookControllerGetSecret: GET /webhooks/{id}/secret', async () => {
      const signingSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
      const webhook = await newWebhook({ signing_secret: signingSecret })
      const { data, response } = await call('webhookControllerGetSecret', { path: { id: webhook.id } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ signing_secret: signingSecret })
    })

    it('webhookControllerRotateSecret: POST /webhooks/{id}/secret/rotate, without a body (a new secret is generated)', async () => {
      const webhook = await newWebhook()
      const { data, response } = await call('webhookControllerRotateSecret', { path: { id: webhook.id } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ signing_secret: expect.stringMatching(/^whsec_/) })
      const current = await server.request<{ signing_secret: string }>('GET', `/api/v0/webhooks/${webhook.id}/secret`, { key })
      expect(current.body).toEqual(data)
    })

    it('webhookControllerSendTest: POST /webhooks/{id}/test', async () => {
      const webhook = await newWebhook()
      const { data, response } = await call('webhookControllerSendTest', { path: { id: webhook.id } })
      expect(response.status).toBe(202)
      expect(data).toMatchObject({ ...DELIVERY_SHAPE, webhook_id: webhook.id })
    })

    it('webhookControllerFindDeliveries: GET /webhooks/{id}/deliveries', async () => {
      const { webhookId, deliveryId } = await deliveredTest()
      const { data, response } = await call('webhookControllerFindDeliveries', { path: { id: webhookId }, query: { status: 'succeeded', skip: 0, take: 100 } })
      expect(response.status).toBe(200)
      expect(data).toEqual(expect.arrayContaining([expect.objectContaining({ ...DELIVERY_SHAPE, id: deliveryId, status: 'succeeded' })]))
    })

    it('webhookControllerFindDelivery: GET /webhooks/{id}/deliveries/{deliveryId}', async () => {
      const { webhookId, deliveryId } = await deliveredTest()
      const { data, response } = await call('webhookControllerFindDelivery', { path: { id: webhookId, deliveryId } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({
        ...DELIVERY_SHAPE,
        id: deliveryId,
        webhook_id: webhookId,
        status: 'succeeded',
        attempts: 1,
        next_attempt_at: null,
        attempt_log: [{ attempt: 1, started_at: A_VALID_DATE, outcome: 'succeeded', status_code: 200 }],
      })
    })

    it('webhookControllerRetryDelivery: POST /webhooks/{id}/deliveries/{deliveryId}/retry', async () => {
      const { webhookId, deliveryId } = await deliveredTest()
      const { data, response } = await call('webhookControllerRetryDelivery', { path: { id: webhookId, deliveryId } })
      expect(response.status).toBe(202)
      expect(data).toMatchObject({ ...DELIVERY_SHAPE, id: deliveryId, webhook_id: webhookId })
    })

    it('without the key headers in the configuration: 401', async () => {
      const { error, response } = await call('webhookControllerFindAll', { client: anonymous })
      expect(response.status).toBe(401)
      expect(error).toMatchObject({ statusCode: 401, error: 'Unauthorized' })
    })
  })
}
