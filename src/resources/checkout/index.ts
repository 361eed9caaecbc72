import { defineManifest } from '../manifest.js'
import { defineResource } from '../resource.js'
import { checkoutMigrations } from './migrations.js'
import { type CheckoutPagesOptions, checkoutPages } from './pages.js'
import { settleCheckoutPayment } from './settlement.js'
import { checkoutTables } from './tables.js'

/**
 * The hosted checkout: HTML pages a payer opens, not API operations, so its manifest names none;
 * the events its payments emit are the invoices' and payment links' (`invoice.paid`, `payment_link.paid`),
 * when the funds of a payment intent it made arrive (`transfer.funds_arrived`).
 */
export const checkout = defineResource({
  manifest: defineManifest({ name: 'checkout', scopes: [], eventTypes: [], operations: [] }),
  configure: ({ config, exchangeRates, publicUrl, receiving }): CheckoutPagesOptions => ({ exchangeRates, drainTimings: config.drains, publicUrl, receiving }),
  tables: checkoutTables,
  migrations: checkoutMigrations,
  pages: checkoutPages,
  subscriptions: { 'transfer.funds_arrived': settleCheckoutPayment },
})
