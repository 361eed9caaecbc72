import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, created, key, newCustomer, newTax, server } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('invoices', () => {
    const INVOICE_SHAPE = {
      id: A_UUID,
      customer_id: A_UUID,
      currency: 'usdc',
      lines: [{ product_id: A_UUID, name: 'Consulting', quantity: 2, unit_price: '100.00', amount: '200.00' }],
      subtotal: '200.00',
      tax: { id: A_UUID, name: expect.any(String), percentage: 20 },
      tax_amount: '40.00',
      total: '240.00',
      amount_paid: '0.00',
      amount_due: '240.00',
      due_date: A_VALID_DATE,
      created_at: A_VALID_DATE,
      updated_at: A_VALID_DATE,
    }
    /** CreateInvoiceDto as the published client sends it: dates as Date (sent toISOString()), items InvoiceProductDto's {product_id, quantity}. */
    async function invoiceBody(status = 'OPEN') {
      const customer = await newCustomer()
      const product = await created('/api/v0/products', { name: 'Consulting', price: '100.00' })
      const tax = await newTax()
      return {
        name: 'March services',
        email: 'billing@example.com',
        customer_id: customer.id,
        currency: 'usdc',
        items: [{ product_id: product.id, quantity: 2 }],
        due_date: new Date('2027-01-31T00:00:00.000Z'),
        delivery: 'EMAIL',
        payment_link: false,
        payment_methods: ['CRYPTO'],
        status,
        partial_payment: false,
        taxId: tax.id,
      }
    }
    const newInvoice = async () => created('/api/v0/invoices', await invoiceBody())

    it('invoiceControllerCreate: POST /invoices', async () => {
      const { data, response } = await call('invoiceControllerCreate', { body: await invoiceBody('DRAFT') })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...INVOICE_SHAPE, status: 'DRAFT' })
    })

    it('invoiceControllerFindAll: GET /invoices', async () => {
      const invoice = await newInvoice()
      const customerId = (await server.request<{ customer_id: string }>('GET', `/api/v0/invoices/${invoice.id}`, { key })).body.customer_id
      const { data, response } = await call('invoiceControllerFindAll', { query: { customer_id: customerId, skip: 0, take: 10 } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ data: [expect.objectContaining({ ...INVOICE_SHAPE, id: invoice.id })], total: 1, skip: 0, take: 10 })
    })

    it('invoiceControllerFindOne: GET /invoices/{id}', async () => {
      const invoice = await newInvoice()
      const { data, response } = await call('invoiceControllerFindOne', { path: { id: invoice.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...INVOICE_SHAPE, id: invoice.id, status: 'OPEN' })
    })

    it('invoiceControllerUpdate: PUT /invoices/{id}, the whole body again', async () => {
      const body = await invoiceBody()
      const invoice = await created('/api/v0/invoices', body)
      const { data, response } = await call('invoiceControllerUpdate', { path: { id: invoice.id }, body: { ...body, status: 'PASTDUE' } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...INVOICE_SHAPE, id: invoice.id, status: 'PASTDUE' })
    })
  })
}
