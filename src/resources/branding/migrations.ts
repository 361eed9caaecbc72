import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const brandingMigrations: Readonly<Record<string, MigrationStep>> = {
  '0023_app_branding': async (db) => {
    await db.schema
      .createTable('app_branding')
      .addColumn('app_id', 'text', (c) => c.primaryKey().references('apps.id'))
      .addColumn('display_name', 'text')
      .addColumn('brand_color', 'text')
      .addColumn('support_email', 'text')
      .addColumn('logo_image_id', 'text')
      .addColumn('logo_type', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('app_branding_logo_image_id').on('app_branding').column('logo_image_id').execute()
  },
}
