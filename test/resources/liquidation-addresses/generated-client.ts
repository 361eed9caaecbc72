import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, newCustomer, newLiquidationAddress, newReceivingAddress } from '../../openapi/generated-client.js'

const PAYOUT_ADDRESS = '0x5aeda56215b167893e80b4fe645ba6d5bab767de'
const LIQUIDATION_ADDRESS_SHAPE = { id: A_UUID, state: 'active', chain: 'ethereum', currency: 'usdc', created_at: A_VALID_DATE, updated_at: A_VALID_DATE }

export function generatedClientCases(): void {
  describe('liquidation addresses', () => {
    it('liquidationAddressControllerCreateLiquidationAddress: POST /customers/{customerId}/liquidation_addresses', async () => {
      const customer = await newCustomer()
      const { address } = await newReceivingAddress()
      const { data, response } = await call('liquidationAddressControllerCreateLiquidationAddress', {
        path: { customerId: customer.id },
        // The key is live: its payouts go to an address on a chain (fiat rails are refused in live).
        body: { chain: 'ethereum', currency: 'usdc', address, destination_payment_rail: 'ethereum', destination_currency: 'usdc', destination_address: PAYOUT_ADDRESS },
      })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...LIQUIDATION_ADDRESS_SHAPE, customer_id: customer.id, address })
    })

    it('liquidationAddressControllerGetLiquidationAddresses: GET /customers/{customerId}/liquidation_addresses', async () => {
      const customer = await newCustomer()
      const address = await newLiquidationAddress(customer.id)
      const { data, response } = await call('liquidationAddressControllerGetLiquidationAddresses', { path: { customerId: customer.id } })
      expect(response.status).toBe(200)
      expect(data).toEqual([expect.objectContaining({ ...LIQUIDATION_ADDRESS_SHAPE, id: address.id, customer_id: customer.id })])
    })

    it('liquidationAddressControllerGetLiquidationAddress: GET /customers/{customerId}/liquidation_addresses/{liquidationAddressId}', async () => {
      const customer = await newCustomer()
      const address = await newLiquidationAddress(customer.id)
      const { data, response } = await call('liquidationAddressControllerGetLiquidationAddress', {
        path: { customerId: customer.id, liquidationAddressId: address.id },
      })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...LIQUIDATION_ADDRESS_SHAPE, id: address.id, customer_id: customer.id })
    })
  })
}
