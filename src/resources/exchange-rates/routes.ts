import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { callerOf } from '../../auth/authenticate.js'
import { InvalidRequest } from '../../errors.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import type { ExchangeRates } from '../../ledger/rates.js'
import { errorResponses } from '../../schemas/common.js'
import { toExchangeRate } from './objects.js'
import { type ApiRateCurrency, ExchangeRateQuery, type ExchangeRateBody, ExchangeRateSchema } from './schemas.js'
import { operation } from '../manifest.js'
import { exchangeRatesManifest } from './manifest.js'

export interface ExchangeRateRoutesOptions {
  /** the instance every conversion uses (EXCHANGE_RATE_MAX_AGE_SECONDS), so the API shows the rate a drain would take */
  exchangeRates: ExchangeRates
}

const DESCRIPTION =
  'A development key reads the sandbox\'s rates (an operator\'s fresh rate, else a fixed default), a production key the live ones (only rates an operator loaded, at most EXCHANGE_RATE_MAX_AGE_SECONDS old; 503 with Retry-After while there is none). usd stands for USDC, eur for EURC.'

export const exchangeRateRoutes: FastifyPluginAsyncTypebox<ExchangeRateRoutesOptions> = async (app, options) => {
  /** The current rate of the caller's environment; 503 while none is fresh. */
  async function rateFor(request: FastifyRequest, from: ApiRateCurrency, to: ApiRateCurrency): Promise<ExchangeRateBody> {
    return toExchangeRate(await options.exchangeRates.current(app.db, ledgerEnvironmentOf(callerOf(request).environment), from, to))
  }

  app.route({
    ...operation(exchangeRatesManifest, 'exchangeRateControllerGetExchangeRate'),
    schema: {
      tags: ['exchange rates'],
      summary: 'Get the exchange rate between two currencies',
      description: DESCRIPTION,
      querystring: ExchangeRateQuery,
      response: { 200: ExchangeRateSchema, ...errorResponses(400, 401, 403, 429, 503) },
    },
    handler: async (request) => {
      const { from, to } = request.query
      if (from === to) throw new InvalidRequest(`Unsupported currency pair: from and to are both ${from}; an exchange rate is between usd and eur`)
      return rateFor(request, from, to)
    },
  })

  for (const [from, to, operationId] of [
    ['eur', 'usd', 'exchangeRateControllerGetEURToUSDRate'],
    ['usd', 'eur', 'exchangeRateControllerGetUSDToEURRate'],
  ] as const) {
    app.route({
      ...operation(exchangeRatesManifest, operationId),
      schema: {
        tags: ['exchange rates'],
        summary: `Get the ${from.toUpperCase()} to ${to.toUpperCase()} exchange rate`,
        description: DESCRIPTION,
        response: { 200: ExchangeRateSchema, ...errorResponses(401, 403, 429, 503) },
      },
      handler: async (request) => rateFor(request, from, to),
    })
  }
}
