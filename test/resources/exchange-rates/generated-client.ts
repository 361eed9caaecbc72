import { beforeAll, describe, expect, it } from 'vitest'
import { saveRates } from '../../../src/ledger/rates.js'
import { call, server } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('exchange rates', () => {
    // A production key reads live rates: only what an operator loaded (the sandbox has its defaults).
    const asOf = new Date(Date.now() - 1000).toISOString()
    beforeAll(async () => {
      await saveRates(server.app.db, [
        { environment: 'live', from: 'usd', to: 'eur', midmarket: '0.86000', buy: '0.85500', sell: '0.86500', asOf },
        { environment: 'live', from: 'eur', to: 'usd', midmarket: '1.16279', buy: '1.15700', sell: '1.16900', asOf },
      ])
    })
    const USD_TO_EUR = { from: 'usd', to: 'eur', midmarket_rate: '0.86000', buy_rate: '0.85500', sell_rate: '0.86500', timestamp: new Date(asOf) }

    it('exchangeRateControllerGetExchangeRate: GET /exchange-rate?from&to, and its 400 as the client parses it', async () => {
      const { data, response } = await call('exchangeRateControllerGetExchangeRate', { query: { from: 'usd', to: 'eur' } })
      expect(response.status).toBe(200)
      expect(data).toEqual(USD_TO_EUR)
      const refused = await call('exchangeRateControllerGetExchangeRate', { query: { from: 'eur', to: 'eur' } })
      expect(refused.response.status).toBe(400)
      expect(refused.error).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Unsupported currency pair: from and to are both eur; an exchange rate is between usd and eur' })
    })

    it('exchangeRateControllerGetEURToUSDRate: GET /exchange-rate/eur-to-usd', async () => {
      const { data, response } = await call('exchangeRateControllerGetEURToUSDRate')
      expect(response.status).toBe(200)
      expect(data).toEqual({ from: 'eur', to: 'usd', midmarket_rate: '1.16279', buy_rate: '1.15700', sell_rate: '1.16900', timestamp: new Date(asOf) })
    })

    it('exchangeRateControllerGetUSDToEURRate: GET /exchange-rate/usd-to-eur', async () => {
      const { data, response } = await call('exchangeRateControllerGetUSDToEURRate')
      expect(response.status).toBe(200)
      expect(data).toEqual(USD_TO_EUR)
    })
  })
}
