import { defineResource } from '../resource.js'
import { DirectoryImageStore } from '../products/public.js'
import { brandingManifest } from './manifest.js'
import { brandingMigrations } from './migrations.js'
import { brandingPages } from './pages.js'
import { type BrandingOptions, brandingRoutes } from './routes.js'
import { brandingTables } from './tables.js'

/** The merchant on the hosted pages (docs/checkout.md#the-merchant): set by an owner's key (branding:write) or `devplatform apps brand`. */
export const branding = defineResource({
  manifest: brandingManifest,
  configure: ({ config, publicUrl }): BrandingOptions => ({ images: new DirectoryImageStore(config.productImagesDir), publicUrl }),
  tables: brandingTables,
  migrations: brandingMigrations,
  routes: brandingRoutes,
  pages: brandingPages,
})
