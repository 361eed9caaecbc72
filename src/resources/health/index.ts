import { defineResource } from '../resource.js'
import { healthManifest } from './manifest.js'
import { healthRoutes, type HealthRoutesOptions, publicHealthRoutes } from './routes.js'

export const health = defineResource({
  manifest: healthManifest,
  configure: ({ redisState }): HealthRoutesOptions => ({ redisState }),
  routes: healthRoutes,
  publicRoutes: publicHealthRoutes,
})
