import { defineResource } from '../resource.js'
import { depositsManifest } from './manifest.js'
import { depositRoutes } from './routes.js'
import { DepositSchema } from './schemas.js'

/** The deposits the chain watchers saw (src/chains/): read-only, and the `deposit.*` events' schema. */
export const deposits = defineResource({
  manifest: depositsManifest,
  routes: depositRoutes,
  configure: (platform) => ({ receiving: platform.receiving }),
  events: Object.fromEntries(depositsManifest.eventTypes.map((type) => [type, DepositSchema])),
})
