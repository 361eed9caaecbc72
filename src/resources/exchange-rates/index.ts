import type { Resource } from '../resource.js'
import { exchangeRatesManifest } from './manifest.js'
import { exchangeRateRoutes } from './routes.js'

export const exchangeRates: Resource = { manifest: exchangeRatesManifest, routes: exchangeRateRoutes }
