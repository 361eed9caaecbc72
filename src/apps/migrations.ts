import type { MigrationStep } from '../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const appsMigrations: Readonly<Record<string, MigrationStep>> = {
  '0001_initial': async (db) => {
    await db.schema
      .createTable('apps')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute()

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('client_key', 'text', (c) => c.notNull().unique())
      .addColumn('secret_digest', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('rate_limit_per_hour', 'integer')
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('deactivated_at', 'text')
      .execute()
    await db.schema.createIndex('api_keys_app_id').on('api_keys').column('app_id').execute()
  },
  '0012_key_management': async (db) => {
    // A rotated key's replaced secret keeps working until previous_secret_expires_at (docs/cli.md);
    // a key with expires_at is refused from then on, checked on every request.
    await db.schema.alterTable('api_keys').addColumn('previous_secret_digest', 'text').execute()
    await db.schema.alterTable('api_keys').addColumn('previous_secret_expires_at', 'text').execute()
    await db.schema.alterTable('api_keys').addColumn('expires_at', 'text').execute()
    // A deleted application's row stays, so the records kept for audit still name their owner.
    await db.schema.alterTable('apps').addColumn('deleted_at', 'text').execute()
  },
}
