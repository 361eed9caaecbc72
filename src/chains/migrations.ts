import { sql } from 'kysely'
import type { MigrationStep } from '../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const chainsMigrations: Readonly<Record<string, MigrationStep>> = {
  '0020_chains': async (db) => {
    await db.schema
      .createTable('chain_address_counter')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('next_index', 'integer', (c) => c.notNull())
      .execute()
    await sql`insert into chain_address_counter (name, next_index) values ('receiving', 0)`.execute(db)
    await db.schema
      .createTable('chain_addresses')
      .addColumn('address', 'text', (c) => c.primaryKey())
      .addColumn('derivation_index', 'integer', (c) => c.notNull().unique())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('owner_type', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text')
      .addColumn('currency', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute()
    // The watcher loads a chain's addresses in index order, from the last it knows.
    await db.schema.createIndex('chain_addresses_chain').on('chain_addresses').columns(['chain', 'derivation_index']).execute()
    await db.schema.createIndex('chain_addresses_owner').on('chain_addresses').columns(['owner_type', 'owner_id']).execute()
    await db.schema
      .createTable('chain_cursors')
      .addColumn('chain', 'text', (c) => c.primaryKey())
      .addColumn('next_block', 'integer', (c) => c.notNull())
      .addColumn('head_block', 'integer')
      .addColumn('head_seen_at', 'text')
      .addColumn('last_error', 'text')
      .addColumn('last_error_at', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('chain_blocks')
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('number', 'integer', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('chain_blocks_key', ['chain', 'number'])
      .execute()
    await db.schema
      .createTable('chain_deposits')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('tx_hash', 'text', (c) => c.notNull())
      .addColumn('log_index', 'integer', (c) => c.notNull())
      .addColumn('block_number', 'integer', (c) => c.notNull())
      .addColumn('block_hash', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('from_address', 'text', (c) => c.notNull())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('owner_type', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('confirmations', 'integer', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('credited_type', 'text')
      .addColumn('credited_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      // Exactly once per log: a log read twice (a restart, two watchers for a moment) is one deposit.
      .addUniqueConstraint('chain_deposits_log', ['chain', 'tx_hash', 'log_index'])
      .execute()
    await db.schema.createIndex('chain_deposits_status').on('chain_deposits').columns(['chain', 'status', 'block_number']).execute()
    await db.schema.createIndex('chain_deposits_app').on('chain_deposits').columns(['app_id', 'environment', 'created_at', 'id']).execute()
    await db.schema
      .createTable('chain_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute()
  },
  '0024_payouts': async (db) => {
    // Live payouts sent by the hot wallet: one per drain or transfer that pays out on chain.
    await db.schema
      .createTable('chain_payouts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('owner_type', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('sender', 'text')
      .addColumn('nonce', 'integer')
      .addColumn('tx_hash', 'text')
      .addColumn('reason', 'text')
      .addColumn('sent_at', 'text')
      .addColumn('approved_by', 'text')
      .addColumn('approved_at', 'text')
      .addColumn('approval_reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      // A movement pays out once: asking again is the same payout.
      .addUniqueConstraint('chain_payouts_owner', ['owner_type', 'owner_id'])
      .execute()
    await db.schema.createIndex('chain_payouts_status').on('chain_payouts').columns(['chain', 'status', 'created_at']).execute()
    // Each signed transaction, written before it is broadcast: after a crash the sender looks for
    // these on chain before it signs anything again.
    await db.schema
      .createTable('chain_payout_attempts')
      .addColumn('tx_hash', 'text', (c) => c.primaryKey())
      .addColumn('payout_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'integer', (c) => c.notNull())
      .addColumn('raw', 'text', (c) => c.notNull())
      .addColumn('max_fee_per_gas', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('chain_payout_attempts_payout').on('chain_payout_attempts').columns(['payout_id', 'created_at']).execute()
    // The hot wallet's next nonce per chain: taken in the transaction that records the signed payout.
    await db.schema
      .createTable('chain_nonces')
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('next_nonce', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('chain_nonces_pk', ['chain', 'address'])
      .execute()
    // What the chain's sender last saw of the hot wallet, for `chains status` and /metrics (any instance reads it).
    await db.schema
      .createTable('chain_senders')
      .addColumn('chain', 'text', (c) => c.primaryKey())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('gas_balance', 'text', (c) => c.notNull())
      .addColumn('seen_at', 'text', (c) => c.notNull())
      .execute()
  },
}
