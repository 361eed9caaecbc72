import { defineResource } from '../resource.js'
import { PaymentIntentSchema, type TransferRoutesOptions } from '../transfers/public.js'
import { paymentIntentsManifest } from './manifest.js'
import { paymentIntentRoutes } from './routes.js'

export const paymentIntents = defineResource({
  manifest: paymentIntentsManifest,
  configure: ({ config, exchangeRates, publicUrl, receiving, payouts }): TransferRoutesOptions => ({ exchangeRates, drainTimings: config.drains, publicUrl, receiving, payouts }),
  routes: paymentIntentRoutes,
  events: { 'payment_intent.created': PaymentIntentSchema, 'payment_intent.updated': PaymentIntentSchema },
})
