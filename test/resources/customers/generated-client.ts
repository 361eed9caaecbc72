import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, key, newCustomer, server } from '../../openapi/generated-client.js'

const CUSTOMER_SHAPE = { id: A_UUID, first_name: expect.any(String), status: expect.any(String), created_at: A_VALID_DATE, updated_at: A_VALID_DATE }

export function generatedClientCases(): void {
  describe('customers', () => {
    it('customerControllerCreate: POST /customers (null for an optional field, as the published client sends it)', async () => {
      const email = `${crypto.randomUUID()}@example.com`
      const { data, response } = await call('customerControllerCreate', {
        body: { first_name: 'Grace', last_name: 'Hopper', phone_number: '+15550101', email, customer_type: null },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...CUSTOMER_SHAPE, first_name: 'Grace', email, customer_type: null, status: 'ACTIVE' })
    })

    it('customerControllerFindAll: GET /customers', async () => {
      const customer = await newCustomer()
      const email = (await server.request<{ email: string }>('GET', `/api/v0/customers/${customer.id}`, { key })).body.email
      const { data, response } = await call('customerControllerFindAll', { query: { email } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ data: [expect.objectContaining({ ...CUSTOMER_SHAPE, id: customer.id })], total: 1, skip: 0, take: 10 })
    })

    it('customerControllerFindOne: GET /customers/{id}', async () => {
      const customer = await newCustomer()
      const { data, response } = await call('customerControllerFindOne', { path: { id: customer.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...CUSTOMER_SHAPE, id: customer.id })
    })

    it('customerControllerUpdate: PATCH /customers/{id}', async () => {
      const customer = await newCustomer()
      const { data, response } = await call('customerControllerUpdate', { path: { id: customer.id }, body: { last_name: 'Byron', status: 'DEACTIVATED' } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...CUSTOMER_SHAPE, id: customer.id, last_name: 'Byron', status: 'DEACTIVATED' })
    })
  })
}
