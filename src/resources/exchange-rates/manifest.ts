import { defineManifest } from '../manifest.js'

export const exchangeRatesManifest = defineManifest({
  name: 'exchange-rates',
  scopes: ['exchange_rate:read'],
  eventTypes: [],
  operations: [
    { method: 'GET', path: '/exchange-rate', operationId: 'exchangeRateControllerGetExchangeRate', scope: 'exchange_rate:read' },
    { method: 'GET', path: '/exchange-rate/eur-to-usd', operationId: 'exchangeRateControllerGetEURToUSDRate', scope: 'exchange_rate:read' },
    { method: 'GET', path: '/exchange-rate/usd-to-eur', operationId: 'exchangeRateControllerGetUSDToEURRate', scope: 'exchange_rate:read' },
  ],
})
