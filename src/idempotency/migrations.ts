import { sql } from 'kysely'
import type { MigrationStep } from '../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const idempotencyMigrations: Readonly<Record<string, MigrationStep>> = {
  '0003_owner_tools': async (db) => {
    // Idempotency-Key: one row per (application, key); status_code is null while the first request runs.
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('content_type', 'text')
      .addColumn('body', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'text', (c) => c.notNull())
      // set inside the first request's own transaction: once its change committed, the key never runs again
      .addColumn('committed_at', 'text')
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['app_id', 'key'])
      .execute()
    await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute()
  },
  '0018_idempotency_per_environment': async (db) => {
    // Idempotency-Keys belong to (application, environment): a development key and a production
    // key of one application never share a stored answer or a claim. The primary key changes, so
    // the table is rebuilt (SQLite cannot alter a primary key). Which environment wrote an earlier
    // row is not recorded: it is kept for both, so the request that wrote it is never run a
    // second time when retried; it goes with the purge, within 24 hours.
    await db.schema
      .createTable('idempotency_keys_by_environment')
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('content_type', 'text')
      .addColumn('body', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'text', (c) => c.notNull())
      .addColumn('committed_at', 'text')
      .addPrimaryKeyConstraint('idempotency_keys_environment_pk', ['app_id', 'environment', 'key'])
      .execute()
    for (const environment of ['development', 'production']) {
      await sql`insert into idempotency_keys_by_environment (app_id, environment, key, fingerprint, status_code, content_type, body, created_at, lease_until, committed_at)
                select app_id, ${environment}, key, fingerprint, status_code, content_type, body, created_at, lease_until, committed_at from idempotency_keys`.execute(db)
    }
    await db.schema.dropTable('idempotency_keys').execute()
    await db.schema.alterTable('idempotency_keys_by_environment').renameTo('idempotency_keys').execute()
    await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute()
  },
}
