import type { Resource } from '../resource.js'
import { PaymentIntentSchema } from '../transfers/public.js'
import { paymentIntentsManifest } from './manifest.js'
import { paymentIntentRoutes } from './routes.js'

export const paymentIntents: Resource = {
  manifest: paymentIntentsManifest,
  routes: paymentIntentRoutes,
  events: { 'payment_intent.created': PaymentIntentSchema, 'payment_intent.updated': PaymentIntentSchema },
}
