import { taxesManifest } from '../../../src/resources/taxes/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const tenancy = { notFound: 'Tax not found', readBack: 'taxControllerFindOne' }

export const securityKit = defineSecurityKit(taxesManifest, {
  fixtures: async ({ server, key }) => ({ tax: await created(server, key, '/api/v0/taxes', { name: 't', percentage: 1 }) }),
  params: { id: 'tax' },
  operations: {
    taxControllerCreate: { body: () => ({ name: 't', percentage: 5 }) },
    taxControllerFindOne: { tenancy },
    taxControllerUpdate: { body: () => ({ name: 'u' }), tenancy },
    taxControllerRemove: { tenancy },
  },
})
