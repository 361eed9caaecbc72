import type { Resource } from '../resource.js'
import { customersManifest } from './manifest.js'
import { customerRoutes } from './routes.js'

export const customers: Resource = { manifest: customersManifest, routes: customerRoutes }
