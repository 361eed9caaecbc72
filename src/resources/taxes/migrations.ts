import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const taxesMigrations: Readonly<Record<string, MigrationStep>> = {
  '0001_initial': async (db) => {
    await db.schema
      .createTable('taxes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('percentage', 'double precision', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('app_ids', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('taxes_app_id_created_at').on('taxes').columns(['app_id', 'created_at']).execute()
  },
}
