import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, newCustomer } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('events', () => {
    it('eventControllerFindAll: GET /events, eventControllerFindOne: GET /events/{id}', async () => {
      const customer = await newCustomer()
      const listed = await call('eventControllerFindAll', { query: { type: 'customer.created', take: 1 } })
      expect(listed.response.status).toBe(200)
      expect(listed.data).toEqual({ data: [{ id: A_UUID, type: 'customer.created', created_at: A_VALID_DATE, data: expect.objectContaining({ id: customer.id }) }], has_more: expect.any(Boolean) })
      const { id } = (listed.data as { data: [{ id: string }] }).data[0]
      const found = await call('eventControllerFindOne', { path: { id } })
      expect(found.response.status).toBe(200)
      expect(found.data).toEqual((listed.data as { data: unknown[] }).data[0])
    })
  })
}
