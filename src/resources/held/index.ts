import { defineResource } from '../resource.js'
import { heldManifest } from './manifest.js'
import { heldMigrations } from './migrations.js'
import { heldRoutes, type HeldRoutesOptions } from './routes.js'
import { heldTables } from './tables.js'

/**
 * Operators' tools for money held in clearing (docs/operations.md#held-money): the drains' and
 * transfers' own steps, called through their public.ts, with an audit record of each action.
 */
export const held = defineResource({
  manifest: heldManifest,
  configure: ({ config, exchangeRates, payouts }): HeldRoutesOptions => ({ money: { rates: exchangeRates, timings: config.drains, now: Date.now, payouts } }),
  tables: heldTables,
  migrations: heldMigrations,
  routes: heldRoutes,
})
