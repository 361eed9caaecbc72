import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const productsMigrations: Readonly<Record<string, MigrationStep>> = {
  '0011_products': async (db) => {
    // An application's products (src/resources/products/). The price is decimal text of an
    // integer of the currency's minor unit; images is JSON (the image bytes are in the ImageStore).
    await db.schema
      .createTable('products')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('price', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('type', 'text')
      .addColumn('product_type', 'text')
      .addColumn('weight', 'double precision')
      .addColumn('unit', 'text')
      .addColumn('quantity', 'integer')
      .addColumn('stock_count', 'integer')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('images', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // The list: an application's products newest first, a page at a time.
    await db.schema.createIndex('products_app_created').on('products').columns(['app_id', 'created_at', 'id']).execute()
  },
}
