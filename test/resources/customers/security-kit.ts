import { customersManifest } from '../../../src/resources/customers/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const notFound = 'Customer not found'
const customerBody = () => ({ first_name: 'A', last_name: 'B', phone_number: '1' })

export const securityKit = defineSecurityKit(customersManifest, {
  fixtures: async ({ server, key }) => ({ customer: await created(server, key, '/api/v0/customers', customerBody()) }),
  params: { id: 'customer' },
  operations: {
    customerControllerCreate: { body: customerBody },
    customerControllerFindOne: { tenancy: { notFound, readBack: 'customerControllerFindOne' } },
    customerControllerUpdate: { body: () => ({ first_name: 'Z' }), tenancy: { notFound, readBack: 'customerControllerFindOne' } },
  },
})
