import type { Resource } from '../resource.js'
import { drainsManifest } from './manifest.js'
import { drainRoutes } from './routes.js'

export const drains: Resource = { manifest: drainsManifest, routes: drainRoutes }
