import type { Resource } from '../resource.js'
import { taxesManifest } from './manifest.js'
import { taxGuardRoutes, taxRoutes } from './routes.js'

export const taxes: Resource = { manifest: taxesManifest, routes: taxRoutes, publicRoutes: taxGuardRoutes }
