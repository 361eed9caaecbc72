import { beforeAll, describe, expect, it } from 'vitest'
import { A_VALID_DATE, call, clientWith, type Fixture, type GeneratedClient, server } from '../../openapi/generated-client.js'
import type { TestKey } from '../../helper.js'

export function generatedClientCases(): void {
  describe('test payments', () => {
    /** sandbox money: a client of the same generated code with a development key */
    let sandbox: GeneratedClient
    let sandboxKey: TestKey
    beforeAll(async () => {
      sandboxKey = await server.createKey({ environment: 'development' })
      sandbox = await clientWith(sandboxKey)
    })
    const PAYMENT_ID = expect.stringMatching(/^pay_[0-9a-f]{24}$/)
    const newPayment = async (): Promise<Fixture> => {
      const res = await server.request<Fixture>('POST', '/api/v0/test-payment', {
        key: sandboxKey,
        body: { amount: 20, currency: 'EUR', description: 'Tea' },
        headers: { 'idempotency-key': crypto.randomUUID() },
      })
      expect(res.status).toBe(201)
      return res.body
    }

    it('testPaymentControllerCreatePaymentV0: POST /test-payment, the idempotency-key a generated header parameter', async () => {
      const { data, response } = await call('testPaymentControllerCreatePaymentV0', {
        client: sandbox,
        headers: { 'idempotency-key': crypto.randomUUID() },
        body: { amount: 100.5, currency: 'USD', description: 'Order #1042' },
      })
      expect(response.status).toBe(201)
      expect(data).toEqual({ id: PAYMENT_ID, amount: 100.5, currency: 'USD', status: 'succeeded', timestamp: A_VALID_DATE, description: 'Order #1042', customerId: null, refunded: false, refundId: null, livemode: false })
    })

    it('testPaymentControllerGetPaymentV0: GET /test-payment/{id}', async () => {
      const payment = await newPayment()
      const { data, response } = await call('testPaymentControllerGetPaymentV0', { client: sandbox, path: { id: payment.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ id: payment.id, amount: 20, currency: 'EUR', status: 'succeeded', timestamp: A_VALID_DATE, refunded: false })
    })

    it('testPaymentControllerRefundPaymentV0: POST /test-payment/{id}/refund, no body', async () => {
      const payment = await newPayment()
      const { data, response } = await call('testPaymentControllerRefundPaymentV0', { client: sandbox, path: { id: payment.id }, headers: { 'idempotency-key': crypto.randomUUID() } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ id: expect.stringMatching(/^ref_[0-9a-f]{24}$/), paymentId: payment.id, amount: 20, currency: 'EUR', status: 'succeeded', timestamp: A_VALID_DATE, livemode: false })
    })
  })
}
