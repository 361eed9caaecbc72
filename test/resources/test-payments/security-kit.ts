import { testPaymentsManifest } from '../../../src/resources/test-payments/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const tenancy = { notFound: 'Test payment not found', readBack: 'testPaymentControllerGetPaymentV0' }

export const securityKit = defineSecurityKit(testPaymentsManifest, {
  /** a sandbox test payment, not refunded: its USDC goes to the sandbox base wallet */
  fixtures: async ({ server, sandboxKey }) => ({
    testPayment: await created(server, sandboxKey, '/api/v0/test-payment', { amount: 2, currency: 'USD', description: 'd' }, { 'idempotency-key': crypto.randomUUID() }),
  }),
  params: { id: 'testPayment' },
  // Test payments are sandbox money: development keys only; another application's payment is 404 to any key.
  environment: 'development',
  operations: {
    testPaymentControllerCreatePaymentV0: { body: () => ({ amount: 1, currency: 'USD', description: 'd' }) },
    testPaymentControllerGetPaymentV0: { tenancy },
    testPaymentControllerRefundPaymentV0: { tenancy },
  },
})
