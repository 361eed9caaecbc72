import { sql } from 'kysely'
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
  '0022_live_wallet_addresses': async (db) => {
    // A live wallet's address is a receiving address derived from the operator's key, given when
    // its chain is on; until then it has none (null). The addresses live wallets had were made up:
    // nothing watched them and no key behind them exists, so they are dropped rather than shown as
    // if money could arrive there. The table is rebuilt: SQLite cannot drop a NOT NULL.
    await db.schema
      .createTable('wallets_with_live_addresses')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('address', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('wallets_environment_app_chain', ['environment', 'app_id', 'chain'])
      .execute()
    await sql`insert into wallets_with_live_addresses (id, environment, app_id, chain, address, created_at, updated_at)
              select id, environment, app_id, chain, case when environment = 'sandbox' then address else null end, created_at, updated_at from wallets`.execute(db)
    await db.schema.dropTable('wallets').execute()
    await db.schema.alterTable('wallets_with_live_addresses').renameTo('wallets').execute()
  },
}
