import { sql } from 'kysely'
import type { MigrationStep } from '../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const ledgerMigrations: Readonly<Record<string, MigrationStep>> = {
  '0009_ledger': async (db) => {
    // The double-entry ledger (src/ledger/ledger.ts). Amounts are decimal text of integers of the
    // currency's smallest unit on both backends: DAI's 18 decimals pass what a 64-bit integer holds.
    await db.schema
      .createTable('ledger_accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('reference', 'text', (c) => c.notNull())
      .addColumn('may_go_negative', 'integer', (c) => c.notNull())
      .addColumn('debits_posted', 'text', (c) => c.notNull())
      .addColumn('credits_posted', 'text', (c) => c.notNull())
      .addColumn('debits_pending', 'text', (c) => c.notNull())
      .addColumn('credits_pending', 'text', (c) => c.notNull())
      .addColumn('available', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('ledger_accounts_key', ['environment', 'app_id', 'kind', 'currency', 'reference'])
      // The database refuses, whatever the code does, an account that may not go negative below zero.
      .addCheckConstraint('ledger_accounts_not_negative', sql`may_go_negative = 1 or available not like '-%'`)
      .execute()
    await db.schema
      .createTable('ledger_entries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason_type', 'text', (c) => c.notNull())
      .addColumn('reason_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('ledger_entries_reason').on('ledger_entries').columns(['reason_type', 'reason_id']).execute()
    await db.schema
      .createTable('ledger_postings')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('entry_id', 'text', (c) => c.notNull().references('ledger_entries.id'))
      .addColumn('account_id', 'text', (c) => c.notNull().references('ledger_accounts.id'))
      .addColumn('direction', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('ledger_postings_entry').on('ledger_postings').columns(['entry_id']).execute()
    await db.schema.createIndex('ledger_postings_account').on('ledger_postings').columns(['account_id']).execute()
  },
  '0010_money': async (db) => {
    // Exchange rates an operator loads, each with the time it was true; the newest one counts.
    await db.schema
      .createTable('exchange_rates')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('from_currency', 'text', (c) => c.notNull())
      .addColumn('to_currency', 'text', (c) => c.notNull())
      .addColumn('midmarket_rate', 'text', (c) => c.notNull())
      .addColumn('buy_rate', 'text', (c) => c.notNull())
      .addColumn('sell_rate', 'text', (c) => c.notNull())
      .addColumn('as_of', 'text', (c) => c.notNull())
      .addColumn('loaded_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('exchange_rates_pair').on('exchange_rates').columns(['environment', 'from_currency', 'to_currency', 'as_of']).execute()
  },
}
