import { drainsManifest } from '../../../src/resources/drains/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const tenancy = { notFound: 'Customer not found', readBack: 'customerControllerFindOne' }

export const securityKit = defineSecurityKit(drainsManifest, {
  /** a sandbox drain at the liquidation address */
  fixtures: async ({ server, sandboxKey, made }) => ({
    drain: await created(server, sandboxKey, `/api/v0/customers/${made.id('customer')}/liquidation_addresses/${made.id('liquidationAddress')}/simulate_deposit`, { amount: '2' }),
  }),
  params: { customerId: 'customer', liquidationAddressId: 'liquidationAddress', drainId: 'drain' },
  environment: 'development',
  operations: {
    drainControllerSimulateDeposit: { body: () => ({ amount: '1.5' }), tenancy },
    drainControllerFindAll: { tenancy },
    drainControllerFindOne: { tenancy },
  },
})
