import { defineResource } from '../resource.js'
import { customersManifest } from './manifest.js'
import { customersMigrations } from './migrations.js'
import { customerRoutes } from './routes.js'
import { CustomerSchema } from './schemas.js'
import { customersTables } from './tables.js'

export const customers = defineResource({
  manifest: customersManifest,
  tables: customersTables,
  migrations: customersMigrations,
  routes: customerRoutes,
  events: { 'customer.created': CustomerSchema, 'customer.updated': CustomerSchema },
})
