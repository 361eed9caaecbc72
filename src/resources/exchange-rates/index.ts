import { defineResource } from '../resource.js'
import { exchangeRatesManifest } from './manifest.js'
import { exchangeRateRoutes, type ExchangeRateRoutesOptions } from './routes.js'

export const exchangeRates = defineResource({
  manifest: exchangeRatesManifest,
  configure: ({ exchangeRates }): ExchangeRateRoutesOptions => ({ exchangeRates }),
  routes: exchangeRateRoutes,
})
