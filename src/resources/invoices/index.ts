import { InvoicePaidSchema } from '../checkout/schemas.js'
import type { Resource } from '../resource.js'
import { invoicesManifest } from './manifest.js'
import { invoiceRoutes } from './routes.js'
import { InvoiceSchema } from './schemas.js'

export const invoices: Resource = {
  manifest: invoicesManifest,
  routes: invoiceRoutes,
  events: { 'invoice.created': InvoiceSchema, 'invoice.updated': InvoiceSchema, 'invoice.paid': InvoicePaidSchema },
}
