import { defineResource } from '../resource.js'
import { taxesManifest } from './manifest.js'
import { taxesMigrations } from './migrations.js'
import { taxGuardRoutes, taxRoutes } from './routes.js'
import { TaxSchema } from './schemas.js'
import { taxesTables } from './tables.js'

export const taxes = defineResource({
  manifest: taxesManifest,
  tables: taxesTables,
  migrations: taxesMigrations,
  routes: taxRoutes,
  publicRoutes: taxGuardRoutes,
  events: { 'tax.created': TaxSchema, 'tax.updated': TaxSchema, 'tax.deleted': TaxSchema },
})
