import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const heldMigrations: Readonly<Record<string, MigrationStep>> = {
  '0028_held_actions': async (db) => {
    // The audit of operators' actions on held money; one action per idempotency key and application.
    await db.schema
      .createTable('held_actions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('target_type', 'text', (c) => c.notNull())
      .addColumn('target_id', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('from_state', 'text', (c) => c.notNull())
      .addColumn('to_state', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('entry_id', 'text')
      .addColumn('return_address', 'text')
      .addColumn('wallet_id', 'text')
      .addColumn('operator', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('held_actions_idempotency', ['app_id', 'environment', 'idempotency_key'])
      .execute()
    await db.schema.createIndex('held_actions_app').on('held_actions').columns(['app_id', 'environment', 'created_at']).execute()
  },
}
