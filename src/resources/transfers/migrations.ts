import { sql } from 'kysely'
import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const transfersMigrations: Readonly<Record<string, MigrationStep>> = {
  '0013_transfers': async (db) => {
    // Transfers and payment intents (src/resources/transfers/), advanced by the money scheduler
    // as drains are: next_step_at is when it next moves on (null while awaiting funds or ended).
    await db.schema
      .createTable('transfers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('wallet_id', 'text')
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'text')
      .addColumn('developer_fee', 'text', (c) => c.notNull())
      .addColumn('destination_currency', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('deposit_instructions', 'text')
      .addColumn('customer', 'text')
      .addColumn('exchange_rate', 'text')
      .addColumn('converted_amount', 'text')
      .addColumn('destination_tx_hash', 'text')
      .addColumn('refund_tx_hash', 'text')
      .addColumn('return_reason', 'text')
      .addColumn('pending_entry_id', 'text')
      .addColumn('next_step_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // The lists: an application's transfers (or payment intents) newest first, a page at a time.
    await db.schema.createIndex('transfers_app_created').on('transfers').columns(['app_id', 'environment', 'created_at', 'id']).execute()
    await db.schema.createIndex('transfers_wallet').on('transfers').columns(['app_id', 'wallet_id', 'created_at', 'id']).execute()
    await db.schema
      .createIndex('transfers_due')
      .on('transfers')
      .column('next_step_at')
      .where(sql.ref('next_step_at'), 'is not', null)
      .execute()
  },
}
