import type { Resource } from '../resource.js'
import { customersManifest } from './manifest.js'
import { customerRoutes } from './routes.js'
import { CustomerSchema } from './schemas.js'

export const customers: Resource = {
  manifest: customersManifest,
  routes: customerRoutes,
  events: { 'customer.created': CustomerSchema, 'customer.updated': CustomerSchema },
}
