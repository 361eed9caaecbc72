import { sql } from 'kysely'
import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const drainsMigrations: Readonly<Record<string, MigrationStep>> = {
  '0010_money': async (db) => {
    // A deposit to a liquidation address and its forwarding; amounts are integer text of the
    // currency's smallest unit. next_step_at is when the scheduler advances it (null once it ended).
    await db.schema
      .createTable('drains')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('liquidation_address_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('deposit_tx_hash', 'text', (c) => c.notNull())
      .addColumn('from_address', 'text')
      .addColumn('source_payment_rail', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('developer_fee', 'text')
      .addColumn('subtotal_amount', 'text')
      .addColumn('exchange_rate', 'text')
      .addColumn('converted_amount', 'text')
      .addColumn('outgoing_amount', 'text')
      .addColumn('destination_tx_hash', 'text')
      .addColumn('refund_tx_hash', 'text')
      .addColumn('return_reason', 'text')
      .addColumn('pending_entry_id', 'text')
      .addColumn('next_step_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('drains_deposit', ['liquidation_address_id', 'deposit_tx_hash'])
      .execute()
    await db.schema.createIndex('drains_address').on('drains').columns(['app_id', 'liquidation_address_id', 'created_at', 'id']).execute()
    await db.schema
      .createIndex('drains_due')
      .on('drains')
      .column('next_step_at')
      .where(sql.ref('next_step_at'), 'is not', null)
      .execute()
  },
}
