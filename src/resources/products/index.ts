import type { Resource } from '../resource.js'
import { productsManifest } from './manifest.js'
import { productsMigrations } from './migrations.js'
import { productImageRoutes, productRoutes } from './routes.js'
import { ProductSchema } from './schemas.js'
import { productsTables } from './tables.js'

export const products: Resource = {
  manifest: productsManifest,
  tables: productsTables,
  migrations: productsMigrations,
  routes: productRoutes,
  publicRoutes: productImageRoutes,
  events: { 'product.created': ProductSchema, 'product.updated': ProductSchema, 'product.deleted': ProductSchema },
}
