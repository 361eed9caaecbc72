import { liquidationAddressesManifest } from '../../../src/resources/liquidation-addresses/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'
import { randomEvmAddress } from '../../helper.js'

// Another application's call is refused at the customer, before the address is looked at.
const tenancy = { notFound: 'Customer not found', readBack: 'customerControllerFindOne' }
const addressBody = () => ({ chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1' })

export const securityKit = defineSecurityKit(liquidationAddressesManifest, {
  // Made with the sandbox key: a live one takes a receiving address of the platform (test/resources/receiving-addresses/); any key reads it.
  fixtures: async ({ server, sandboxKey, made }) => ({
    liquidationAddress: await created(server, sandboxKey, `/api/v0/customers/${made.id('customer')}/liquidation_addresses`, addressBody()),
  }),
  params: { customerId: 'customer', liquidationAddressId: 'liquidationAddress' },
  operations: {
    liquidationAddressControllerCreateLiquidationAddress: { body: addressBody, tenancy, environment: 'development' },
    liquidationAddressControllerGetLiquidationAddresses: { tenancy },
    liquidationAddressControllerGetLiquidationAddress: { tenancy },
  },
})
