import type { TableDeclaration } from '../../modules/module.js'

/** An application's merchant details on the hosted pages; no row: every field its default. */
export interface AppBrandingTable {
  app_id: string
  /** null: the application's name */
  display_name: string | null
  /** `#rrggbb`; null: the platform's default colour */
  brand_color: string | null
  support_email: string | null
  /** the logo's key in the image store (PRODUCT_IMAGES_DIR), and its media type as its bytes declare it */
  logo_image_id: string | null
  logo_type: string | null
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    app_branding: AppBrandingTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const brandingTables: readonly TableDeclaration[] = [{ name: 'app_branding', appDeletion: 'removed' }]
