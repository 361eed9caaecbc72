import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const walletsMigrations: Readonly<Record<string, MigrationStep>> = {
  '0010_money': async (db) => {
    // An application's wallets, one per environment and chain, each holding several currencies
    // (a ledger account per currency, its reference the wallet's id).
    await db.schema
      .createTable('wallets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('wallets_app_chain', ['environment', 'app_id', 'chain'])
      .execute()
  },
}
