import { depositsManifest } from '../../../src/resources/deposits/manifest.js'
import { defineSecurityKit } from '../../auth/security-kit.js'
import { insertDeposit } from './fixtures.js'

export const securityKit = defineSecurityKit(depositsManifest, {
  fixtures: async ({ server, key }) => ({ deposit: (await insertDeposit(server, key.appId)).id }),
  params: { id: 'deposit' },
  operations: {
    depositControllerFindOne: { tenancy: { notFound: 'Deposit not found', readBack: 'depositControllerFindOne' } },
  },
})
