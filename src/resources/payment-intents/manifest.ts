import { defineManifest } from '../manifest.js'

export const paymentIntentsManifest = defineManifest({
  name: 'payment-intents',
  scopes: ['payment_intent:create', 'payment_intent:list', 'payment_intent:read', 'payment_intent:cancel', 'payment_intent:simulate'],
  eventTypes: ['payment_intent.created', 'payment_intent.updated'],
  eventRows: [
    {
      types: ['payment_intent.created', 'payment_intent.updated'],
      emittedBy: '`POST /payment-intents/bank`, `/stablecoin` / each state change, as for transfers',
      data: "the payment intent (a transfer's shape, [transfers.md](transfers.md#payment-intents))",
    },
  ],
  operations: [
    { method: 'POST', path: '/payment-intents/bank', operationId: 'paymentIntentControllerCreateBankPaymentIntent', scope: 'payment_intent:create', idempotencyKey: 'required' },
    { method: 'POST', path: '/payment-intents/stablecoin', operationId: 'paymentIntentControllerCreateStablePaymentIntent', scope: 'payment_intent:create', idempotencyKey: 'required' },
    { method: 'GET', path: '/payment-intents', operationId: 'paymentIntentControllerFindAll', scope: 'payment_intent:list' },
    { method: 'GET', path: '/payment-intents/:id', operationId: 'paymentIntentControllerFindOne', scope: 'payment_intent:read' },
    { method: 'DELETE', path: '/payment-intents/:id', operationId: 'paymentIntentControllerCancel', scope: 'payment_intent:cancel' },
    { method: 'POST', path: '/payment-intents/:id/simulate_funds', operationId: 'paymentIntentControllerSimulateFunds', scope: 'payment_intent:simulate' },
  ],
})
