import { PaymentLinkPaidSchema } from '../checkout/schemas.js'
import type { Resource } from '../resource.js'
import { paymentLinksManifest } from './manifest.js'
import { paymentLinkRoutes } from './routes.js'
import { PaymentLinkSchema } from './schemas.js'

export const paymentLinks: Resource = {
  manifest: paymentLinksManifest,
  routes: paymentLinkRoutes,
  events: { 'payment_link.created': PaymentLinkSchema, 'payment_link.updated': PaymentLinkSchema, 'payment_link.paid': PaymentLinkPaidSchema },
}
