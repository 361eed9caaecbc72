import type { Resource } from '../resource.js'
import { healthManifest } from './manifest.js'
import { healthRoutes, publicHealthRoutes } from './routes.js'

export const health: Resource = { manifest: healthManifest, routes: healthRoutes, publicRoutes: publicHealthRoutes }
