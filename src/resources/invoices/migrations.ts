import { sql } from 'kysely'
import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const invoicesMigrations: Readonly<Record<string, MigrationStep>> = {
  '0015_invoices': async (db) => {
    // An application's invoices (src/resources/invoices/). Amounts are integer text of cents of
    // the invoice's currency; lines is JSON with each line's price frozen when it was set.
    await db.schema
      .createTable('invoices')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('lines', 'text', (c) => c.notNull())
      .addColumn('subtotal', 'text', (c) => c.notNull())
      .addColumn('tax_id', 'text')
      .addColumn('tax_name', 'text')
      .addColumn('tax_percentage', 'text')
      .addColumn('tax_amount', 'text', (c) => c.notNull())
      .addColumn('total', 'text', (c) => c.notNull())
      .addColumn('amount_paid', 'text', (c) => c.notNull())
      .addColumn('due_date', 'text', (c) => c.notNull())
      .addColumn('send_date', 'text')
      .addColumn('delivery', 'text', (c) => c.notNull())
      .addColumn('payment_methods', 'text', (c) => c.notNull())
      .addColumn('payment_link', 'integer', (c) => c.notNull())
      .addColumn('payment_link_id', 'text')
      .addColumn('partial_payment', 'integer', (c) => c.notNull())
      .addColumn('address', 'text')
      .addColumn('phone_number', 'text')
      .addColumn('logo', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // The list: an application's invoices newest first, a page at a time; and those of one customer.
    await db.schema.createIndex('invoices_app_created').on('invoices').columns(['app_id', 'created_at', 'id']).execute()
    await db.schema.createIndex('invoices_app_customer').on('invoices').columns(['app_id', 'customer_id', 'created_at', 'id']).execute()
  },
  '0019_hosted_payment_environment': async (db) => {
    // The money an invoice's hosted page takes: the environment of the key that created it (live
    // for a production key, sandbox for a development key), fixed for its life. Which key made an
    // earlier invoice was not recorded. An application that never had a production key can only
    // have made its invoices with development keys: sandbox. Any other (a production key exists,
    // or the application was deleted and its keys with it) gets the conservative live, so no
    // sandbox completion can pay an invoice that may be live; its page then waits for live funds.
    await db.schema.alterTable('invoices').addColumn('environment', 'text', (c) => c.notNull().defaultTo('live')).execute()
    await sql`update invoices set environment = 'sandbox'
              where exists (select 1 from apps where apps.id = invoices.app_id and apps.deleted_at is null)
                and not exists (select 1 from api_keys where api_keys.app_id = invoices.app_id and api_keys.environment = 'production')`.execute(db)
  },
}
