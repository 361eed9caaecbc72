import type { Resource } from '../resource.js'
import { drainsManifest } from './manifest.js'
import { drainsMigrations } from './migrations.js'
import { drainRoutes } from './routes.js'
import { DrainSchema } from './schemas.js'
import { drainsTables } from './tables.js'

export const drains: Resource = {
  manifest: drainsManifest,
  tables: drainsTables,
  migrations: drainsMigrations,
  routes: drainRoutes,
  events: { 'liquidation_address.drain.created': DrainSchema, 'liquidation_address.drain.updated': DrainSchema },
}
