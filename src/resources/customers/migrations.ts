import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const customersMigrations: Readonly<Record<string, MigrationStep>> = {
  '0001_initial': async (db) => {
    await db.schema
      .createTable('customers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('first_name', 'text', (c) => c.notNull())
      .addColumn('last_name', 'text', (c) => c.notNull())
      .addColumn('phone_number', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('email_key', 'text')
      .addColumn('customer_type', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // NULL emails are distinct in both SQLite and PostgreSQL, so customers without email never collide.
    await db.schema.createIndex('customers_app_id_email_key').on('customers').columns(['app_id', 'email_key']).unique().execute()
    await db.schema.createIndex('customers_app_id_created_at').on('customers').columns(['app_id', 'created_at']).execute()
  },
}
