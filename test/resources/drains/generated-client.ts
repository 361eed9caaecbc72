import { beforeAll, describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, clientWith, type Fixture, type GeneratedClient, key, newCustomer, newLiquidationAddress, server } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('drains', () => {
    /** sandbox money: a client of the same generated code with a development key of the same application */
    let sandbox: GeneratedClient
    beforeAll(async () => {
      sandbox = await clientWith(await server.createKey({ appId: key.appId, environment: 'development' }))
    })
    const DRAIN_SHAPE = { id: A_UUID, state: expect.any(String), amount: '12.500000', currency: 'usdc', source_payment_rail: 'ethereum', created_at: A_VALID_DATE, updated_at: A_VALID_DATE }

    async function newDrain(): Promise<{ customerId: string; liquidationAddressId: string; id: string }> {
      const customer = await newCustomer()
      const address = await newLiquidationAddress(customer.id)
      const { data, response } = await call('drainControllerSimulateDeposit', { client: sandbox, path: { customerId: customer.id, liquidationAddressId: address.id }, body: { amount: '12.5' } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...DRAIN_SHAPE, state: 'funds_received', liquidation_address_id: address.id })
      return { customerId: customer.id, liquidationAddressId: address.id, id: (data as Fixture).id }
    }

    it('drainControllerSimulateDeposit: POST /customers/{customerId}/liquidation_addresses/{liquidationAddressId}/simulate_deposit', async () => {
      await newDrain()
    })

    it('drainControllerFindAll: GET /customers/{customerId}/liquidation_addresses/{liquidationAddressId}/drains', async () => {
      const drain = await newDrain()
      const { data, response } = await call('drainControllerFindAll', { client: sandbox, path: { customerId: drain.customerId, liquidationAddressId: drain.liquidationAddressId } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ data: [expect.objectContaining({ ...DRAIN_SHAPE, id: drain.id })], total: 1, skip: 0, take: 10 })
    })

    it('drainControllerFindOne: GET /customers/{customerId}/liquidation_addresses/{liquidationAddressId}/drains/{drainId}', async () => {
      const drain = await newDrain()
      const { data, response } = await call('drainControllerFindOne', { client: sandbox, path: { customerId: drain.customerId, liquidationAddressId: drain.liquidationAddressId, drainId: drain.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...DRAIN_SHAPE, id: drain.id })
    })
  })
}
