import { defineResource } from '../resource.js'
import { creditLiquidationAddress } from './chain-deposits.js'
import { followDrainPayout } from './chain-payouts.js'
import { drainsManifest } from './manifest.js'
import { drainsMigrations } from './migrations.js'
import { drainRoutes, type DrainRoutesOptions } from './routes.js'
import { DrainSchema } from './schemas.js'
import { drainsTables } from './tables.js'

export const drains = defineResource({
  manifest: drainsManifest,
  configure: ({ config, exchangeRates }): DrainRoutesOptions => ({ exchangeRates, drainTimings: config.drains }),
  tables: drainsTables,
  migrations: drainsMigrations,
  routes: drainRoutes,
  subscriptions: { 'chain.deposit_confirmed': creditLiquidationAddress, 'chain.payout_updated': followDrainPayout },
  events: { 'liquidation_address.drain.created': DrainSchema, 'liquidation_address.drain.updated': DrainSchema },
})
