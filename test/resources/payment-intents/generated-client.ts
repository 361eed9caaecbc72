import { beforeAll, describe, expect, it } from 'vitest'
import { call, clientWith, type Fixture, type GeneratedClient, server } from '../../openapi/generated-client.js'
import type { TestKey } from '../../helper.js'
import { TRANSFER_SHAPE } from '../transfers/generated-client.js'

export function generatedClientCases(): void {
  describe('payment intents', () => {
    /** sandbox money: a client of the same generated code with a development key */
    let sandbox: GeneratedClient
    let sandboxKey: TestKey
    beforeAll(async () => {
      sandboxKey = await server.createKey({ environment: 'development' })
      sandbox = await clientWith(sandboxKey)
    })
    const newIntent = async (): Promise<Fixture> => {
      const res = await server.request<Fixture>('POST', '/api/v0/payment-intents/stablecoin', {
        key: sandboxKey,
        body: { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: '1' },
        headers: { 'idempotency-key': crypto.randomUUID() },
      })
      expect(res.status).toBe(201)
      return res.body
    }

    it('paymentIntentControllerCreateBankPaymentIntent: POST /payment-intents/bank, the idempotency-key a generated header parameter', async () => {
      const { data, response } = await call('paymentIntentControllerCreateBankPaymentIntent', {
        client: sandbox,
        headers: { 'idempotency-key': crypto.randomUUID() },
        body: { sourcePaymentRail: 'ach_push', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '10.00', customer_email: 'payer@example.com' },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, type: 'payment_intent_bank', state: 'awaiting_funds', customer: { email: 'payer@example.com' } })
    })

    it('paymentIntentControllerCreateStablePaymentIntent: POST /payment-intents/stablecoin, a flexible amount', async () => {
      const { data, response } = await call('paymentIntentControllerCreateStablePaymentIntent', {
        client: sandbox,
        headers: { 'idempotency-key': crypto.randomUUID() },
        body: { sourceCurrency: 'usdc', sourceNetwork: 'ethereum', destinationNetwork: 'base' },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, type: 'payment_intent_stablecoin', amount: null })
    })

    it('paymentIntentControllerFindAll: GET /payment-intents', async () => {
      await newIntent()
      const { data, response } = await call('paymentIntentControllerFindAll', { client: sandbox, query: { take: 5 } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ data: expect.arrayContaining([expect.objectContaining(TRANSFER_SHAPE)]), take: 5 })
    })

    it('paymentIntentControllerFindOne: GET /payment-intents/{id}', async () => {
      const intent = await newIntent()
      const { data, response } = await call('paymentIntentControllerFindOne', { client: sandbox, path: { id: intent.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...TRANSFER_SHAPE, id: intent.id })
    })

    it('paymentIntentControllerCancel: DELETE /payment-intents/{id}', async () => {
      const intent = await newIntent()
      const { data, response } = await call('paymentIntentControllerCancel', { client: sandbox, path: { id: intent.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ id: intent.id, state: 'canceled' })
    })

    it('paymentIntentControllerSimulateFunds: POST /payment-intents/{id}/simulate_funds, no body', async () => {
      const intent = await newIntent()
      const { data, response } = await call('paymentIntentControllerSimulateFunds', { client: sandbox, path: { id: intent.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ id: intent.id, state: 'funds_received' })
    })
  })
}
