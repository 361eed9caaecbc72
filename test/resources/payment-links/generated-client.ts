import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, created, key, server } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('payment links', () => {
    const LINK_SHAPE = {
      id: A_UUID,
      title: expect.any(String),
      url: expect.any(String),
      checkout_url: expect.any(String),
      linkType: expect.any(String),
      currency: expect.any(String),
      payments_count: 0,
      status: 'active',
      created_at: A_VALID_DATE,
      updated_at: A_VALID_DATE,
    }
    const linkBody = (body: Record<string, unknown> = {}) => ({
      title: 'Support us',
      url: `client-${crypto.randomUUID()}`,
      linkType: 'DONATION',
      allowQuantityAdjustment: false,
      collectTax: false,
      collectAddress: false,
      allowMobilePayment: false,
      currency: 'usdc',
      ...body,
    })

    it('paymentLinksControllerCreate: POST /payment-links, a PRODUCT link, amounts as JSON numbers as the published client sends them', async () => {
      const product = await created('/api/v0/products', { name: `Widget ${crypto.randomUUID()}`, price: '9.99' })
      const url = `client-${crypto.randomUUID()}`
      const { data, response } = await call('paymentLinksControllerCreate', {
        body: linkBody({ url: `https://pay.example.com/pay/${url}`, linkType: 'PRODUCT', allowQuantityAdjustment: true, paymentLinkProducts: [{ productId: product.id, quantity: 2 }], limitPayments: true, maxPayments: 5 }),
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...LINK_SHAPE, url, checkout_url: `${server.baseUrl}/pay/${key.appId}/${url}`, linkType: 'PRODUCT', amount: null, paymentLinkProducts: [{ productId: product.id, quantity: 2 }], maxPayments: 5 })
    })

    it('paymentLinksControllerFindAll: GET /payment-links, skip and take as text as the published client sends them', async () => {
      const link = await created('/api/v0/payment-links', linkBody({ linkType: 'COLLECTION', currency: 'eurc' }))
      const { data, response } = await call('paymentLinksControllerFindAll', { query: { skip: '0', take: '1', linkType: 'COLLECTION', currency: 'eurc' } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ data: [{ ...LINK_SHAPE, id: link.id }], skip: 0, take: 1 })
    })

    it('paymentLinksControllerFindOne: GET /payment-links/{id}', async () => {
      const link = await created('/api/v0/payment-links', linkBody({ amount: 25.5, expiration_date: '2099-01-01T00:00:00.000Z' }))
      const { data, response } = await call('paymentLinksControllerFindOne', { path: { id: link.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...LINK_SHAPE, id: link.id, amount: '25.500000', expiration_date: A_VALID_DATE })
    })

    it('paymentLinksControllerUpdate: PUT /payment-links/{id}, a partial body', async () => {
      const link = await created('/api/v0/payment-links', linkBody({ amount: '5' }))
      const { data, response } = await call('paymentLinksControllerUpdate', { path: { id: link.id }, body: { title: 'Renamed', amount: 7.25 } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...LINK_SHAPE, id: link.id, title: 'Renamed', amount: '7.250000', linkType: 'DONATION' })
    })
  })
}
