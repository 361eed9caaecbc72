import { defineResource } from '../resource.js'
import { balancesManifest } from './manifest.js'
import { balanceRoutes, type BalanceRoutesOptions } from './routes.js'

export const balances = defineResource({
  manifest: balancesManifest,
  configure: ({ exchangeRates, receiving }): BalanceRoutesOptions => ({ exchangeRates, receiving }),
  routes: balanceRoutes,
})
