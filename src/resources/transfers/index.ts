import type { Resource } from '../resource.js'
import { transfersManifest } from './manifest.js'
import { transfersMigrations } from './migrations.js'
import { transferRoutes } from './routes.js'
import { TransferSchema } from './schemas.js'
import { transfersTables } from './tables.js'

export const transfers: Resource = {
  manifest: transfersManifest,
  tables: transfersTables,
  migrations: transfersMigrations,
  routes: transferRoutes,
  events: { 'transfer.created': TransferSchema, 'transfer.updated': TransferSchema },
}
