import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const testPaymentsMigrations: Readonly<Record<string, MigrationStep>> = {
  '0014_test_payments': async (db) => {
    // Sandbox card payments (src/resources/test-payments/): amount is integer text of the fiat
    // currency's minor unit; the refund columns are set once, by the one refund a payment may have.
    await db.schema
      .createTable('test_payments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text')
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('entry_id', 'text', (c) => c.notNull())
      .addColumn('refund_id', 'text', (c) => c.unique())
      .addColumn('refund_entry_id', 'text')
      .addColumn('refunded_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('test_payments_app_created').on('test_payments').columns(['app_id', 'created_at', 'id']).execute()
  },
}
