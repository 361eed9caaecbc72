import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const checkoutMigrations: Readonly<Record<string, MigrationStep>> = {
  '0017_checkout': async (db) => {
    // What a hosted checkout's payment intent pays (src/resources/checkout/): one row per intent,
    // naming the invoice or the payment link; settled in the transaction its funds arrive in.
    await db.schema
      .createTable('checkout_payments')
      .addColumn('transfer_id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('invoice_id', 'text')
      .addColumn('payment_link_id', 'text')
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('address', 'text')
      .addColumn('items', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('paid_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute()
  },
}
