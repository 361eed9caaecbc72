import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const consoleMigrations: Readonly<Record<string, MigrationStep>> = {
  '0026_console': async (db) => {
    await db.schema
      .createTable('console_links')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('token_digest', 'text', (c) => c.notNull().unique())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute()
    await db.schema.createIndex('console_links_app').on('console_links').column('app_id').execute()
    await db.schema
      .createTable('console_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('session_digest', 'text', (c) => c.notNull().unique())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('ended_at', 'text')
      .execute()
    await db.schema.createIndex('console_sessions_app').on('console_sessions').column('app_id').execute()
  },
}
