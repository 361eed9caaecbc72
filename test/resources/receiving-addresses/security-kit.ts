import { receivingAddressesManifest } from '../../../src/resources/receiving-addresses/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

// Sandbox keys: the kit's server receives on no chain, so a production key's create is refused (receiving-addresses.test.ts).
export const securityKit = defineSecurityKit(receivingAddressesManifest, {
  fixtures: async ({ server, sandboxKey }) => ({
    receivingAddress: await created(server, sandboxKey, '/api/v0/receiving-addresses', { chain: 'base', currency: 'usdc' }),
  }),
  params: { id: 'receivingAddress' },
  environment: 'development',
  operations: {
    receivingAddressControllerCreate: { body: () => ({ chain: 'base', currency: 'usdc' }) },
    receivingAddressControllerFindOne: { tenancy: { notFound: 'Receiving address not found', readBack: 'receivingAddressControllerFindOne' } },
  },
})
