import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, newReceivingAddress } from '../../openapi/generated-client.js'

const SHAPE = { id: A_UUID, chain: 'base', currency: 'usdc', livemode: true, liquidation_address_id: null, created_at: A_VALID_DATE }

export function generatedClientCases(): void {
  describe('receiving addresses', () => {
    it('receivingAddressControllerCreate: POST /receiving-addresses', async () => {
      const { data, response } = await call('receivingAddressControllerCreate', { body: { chain: 'base', currency: 'usdc' } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...SHAPE, address: expect.stringMatching(/^0x[0-9a-f]{40}$/) })
    })

    it('receivingAddressControllerFindAll: GET /receiving-addresses', async () => {
      const made = await newReceivingAddress('base')
      const { data, response } = await call('receivingAddressControllerFindAll', { query: { take: 1 } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ data: [{ ...SHAPE, id: made.id, address: made.address }], skip: 0, take: 1 })
    })

    it('receivingAddressControllerFindOne: GET /receiving-addresses/{id}', async () => {
      const made = await newReceivingAddress('base')
      const { data, response } = await call('receivingAddressControllerFindOne', { path: { id: made.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...SHAPE, id: made.id, address: made.address })
    })
  })
}
