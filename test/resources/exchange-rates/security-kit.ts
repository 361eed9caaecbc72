import { exchangeRatesManifest } from '../../../src/resources/exchange-rates/manifest.js'
import { defineSecurityKit } from '../../auth/security-kit.js'

export const securityKit = defineSecurityKit(exchangeRatesManifest, {
  // The sandbox always has a rate (its defaults); live answers 503 until an operator loads one.
  environment: 'development',
  operations: {
    exchangeRateControllerGetExchangeRate: { query: { from: 'usd', to: 'eur' } },
  },
})
