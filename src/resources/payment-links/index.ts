import { defineResource } from '../resource.js'
import { paymentLinksManifest } from './manifest.js'
import { paymentLinksMigrations } from './migrations.js'
import { paymentLinkRoutes, type PaymentLinkRoutesOptions } from './routes.js'
import { PaymentLinkPaidSchema, PaymentLinkSchema } from './schemas.js'
import { paymentLinksTables } from './tables.js'

export const paymentLinks = defineResource({
  manifest: paymentLinksManifest,
  configure: ({ publicUrl }): PaymentLinkRoutesOptions => ({ publicUrl }),
  tables: paymentLinksTables,
  migrations: paymentLinksMigrations,
  routes: paymentLinkRoutes,
  events: { 'payment_link.created': PaymentLinkSchema, 'payment_link.updated': PaymentLinkSchema, 'payment_link.paid': PaymentLinkPaidSchema },
})
