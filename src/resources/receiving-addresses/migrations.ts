import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const receivingAddressesMigrations: Readonly<Record<string, MigrationStep>> = {
  '0021_receiving_addresses': async (db) => {
    await db.schema
      .createTable('receiving_addresses')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('liquidation_address_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('receiving_addresses_address').on('receiving_addresses').columns(['address', 'chain']).unique().execute()
    await db.schema.createIndex('receiving_addresses_app').on('receiving_addresses').columns(['app_id', 'environment', 'created_at', 'id']).execute()
  },
}
