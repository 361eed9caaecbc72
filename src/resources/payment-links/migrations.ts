import { sql } from 'kysely'
import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const paymentLinksMigrations: Readonly<Record<string, MigrationStep>> = {
  '0016_payment_links': async (db) => {
    // An application's payment links (src/resources/payment-links/): amount is integer text of the
    // currency's smallest unit; products and custom_fields are JSON. payments_count is raised by
    // the paying half with a conditional update (never past max_payments).
    await db.schema
      .createTable('payment_links')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('cover_image', 'text')
      .addColumn('link_type', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'text')
      .addColumn('payment_for_id', 'text')
      .addColumn('customer_id', 'text')
      .addColumn('products', 'text', (c) => c.notNull())
      .addColumn('is_for_all_products', 'integer', (c) => c.notNull())
      .addColumn('allow_quantity_adjustment', 'integer', (c) => c.notNull())
      .addColumn('collect_tax', 'integer', (c) => c.notNull())
      .addColumn('tax_id', 'text')
      .addColumn('collect_address', 'integer', (c) => c.notNull())
      .addColumn('allow_mobile_payment', 'integer', (c) => c.notNull())
      .addColumn('limit_payments', 'integer', (c) => c.notNull())
      .addColumn('max_payments', 'integer')
      .addColumn('payments_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('custom_fields', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // A slug names one link of an application (the hosted page's address); another application may use it too.
    await db.schema.createIndex('payment_links_app_slug').on('payment_links').columns(['app_id', 'slug']).unique().execute()
    // The list: an application's links newest first, a page at a time.
    await db.schema.createIndex('payment_links_app_created').on('payment_links').columns(['app_id', 'created_at', 'id']).execute()
  },
  '0019_hosted_payment_environment': async (db) => {
    // The money a payment link's hosted page takes: the environment of the key that created it
    // (live for a production key, sandbox for a development key), fixed for its life. Which key
    // made an earlier link was not recorded. An application that never had a production key can
    // only have made its links with development keys: sandbox. Any other (a production key exists,
    // or the application was deleted and its keys with it) gets the conservative live, so no
    // sandbox completion can pay a link that may be live; its page then waits for live funds.
    await db.schema.alterTable('payment_links').addColumn('environment', 'text', (c) => c.notNull().defaultTo('live')).execute()
    await sql`update payment_links set environment = 'sandbox'
              where exists (select 1 from apps where apps.id = payment_links.app_id and apps.deleted_at is null)
                and not exists (select 1 from api_keys where api_keys.app_id = payment_links.app_id and api_keys.environment = 'production')`.execute(db)
  },
}
