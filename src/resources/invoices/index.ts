import { defineResource } from '../resource.js'
import { invoicesManifest } from './manifest.js'
import { invoicesMigrations } from './migrations.js'
import { invoiceRoutes, type InvoiceRoutesOptions } from './routes.js'
import { InvoicePaidSchema, InvoiceSchema } from './schemas.js'
import { invoicesTables } from './tables.js'

export const invoices = defineResource({
  manifest: invoicesManifest,
  configure: ({ publicUrl }): InvoiceRoutesOptions => ({ publicUrl }),
  tables: invoicesTables,
  migrations: invoicesMigrations,
  routes: invoiceRoutes,
  events: { 'invoice.created': InvoiceSchema, 'invoice.updated': InvoiceSchema, 'invoice.paid': InvoicePaidSchema },
})
