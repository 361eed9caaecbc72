import { defineResource } from '../resource.js'
import { DirectoryImageStore } from './image-store.js'
import { productsManifest } from './manifest.js'
import { productsMigrations } from './migrations.js'
import { productImageRoutes, productRoutes, type ProductRoutesOptions } from './routes.js'
import { ProductSchema } from './schemas.js'
import { productsTables } from './tables.js'

export const products = defineResource({
  manifest: productsManifest,
  configure: ({ config, publicUrl }): ProductRoutesOptions => ({ productImages: new DirectoryImageStore(config.productImagesDir), publicUrl }),
  tables: productsTables,
  migrations: productsMigrations,
  routes: productRoutes,
  publicRoutes: productImageRoutes,
  events: { 'product.created': ProductSchema, 'product.updated': ProductSchema, 'product.deleted': ProductSchema },
})
