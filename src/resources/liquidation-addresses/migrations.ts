import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const liquidationAddressesMigrations: Readonly<Record<string, MigrationStep>> = {
  '0001_initial': async (db) => {
    await db.schema
      .createTable('liquidation_addresses')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id'))
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('address_key', 'text', (c) => c.notNull())
      .addColumn('external_account_id', 'text')
      .addColumn('prefunded_account_id', 'text')
      .addColumn('bridge_wallet_id', 'text')
      .addColumn('destination_payment_rail', 'text', (c) => c.notNull())
      .addColumn('destination_currency', 'text', (c) => c.notNull())
      .addColumn('destination_wire_message', 'text')
      .addColumn('destination_sepa_reference', 'text')
      .addColumn('destination_ach_reference', 'text')
      .addColumn('destination_address', 'text')
      .addColumn('destination_blockchain_memo', 'text')
      .addColumn('return_address', 'text')
      .addColumn('custom_developer_fee_percent', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('liquidation_addresses_chain_address').on('liquidation_addresses').columns(['chain', 'address_key']).unique().execute()
    await db.schema.createIndex('liquidation_addresses_customer').on('liquidation_addresses').columns(['app_id', 'customer_id', 'created_at']).execute()
  },
}
