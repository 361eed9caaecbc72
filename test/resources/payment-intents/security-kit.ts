import { paymentIntentsManifest } from '../../../src/resources/payment-intents/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const tenancy = { notFound: 'Payment intent not found', readBack: 'paymentIntentControllerFindOne' }

export const securityKit = defineSecurityKit(paymentIntentsManifest, {
  /** a sandbox stablecoin payment intent awaiting funds */
  fixtures: async ({ server, sandboxKey }) => ({
    paymentIntent: await created(server, sandboxKey, '/api/v0/payment-intents/stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: '1' }, { 'idempotency-key': crypto.randomUUID() }),
  }),
  params: { id: 'paymentIntent' },
  // Sandbox money: the development key's.
  environment: 'development',
  operations: {
    paymentIntentControllerCreateBankPaymentIntent: { body: () => ({ sourcePaymentRail: 'ach_push', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '1.00' }) },
    paymentIntentControllerCreateStablePaymentIntent: { body: () => ({ sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base' }) },
    paymentIntentControllerFindOne: { tenancy },
    paymentIntentControllerCancel: { tenancy },
    paymentIntentControllerSimulateFunds: { tenancy },
  },
})
