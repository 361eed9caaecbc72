import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { callerOf } from '../../auth/authenticate.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { LiveReceiving } from '../../ledger/money-context.js'
import { convert, type ExchangeRates } from '../../ledger/rates.js'
import { type Holding, holdingsOf, WALLET_CURRENCIES, type WalletCurrency, walletsOf } from '../wallets/public.js'
import { errorResponses } from '../../schemas/common.js'
import { toAggregatedBalance, toAllBalances } from './objects.js'
import { type AggregatedBalanceResponse, AggregatedBalanceResponseSchema, type AllBalancesResponse, AllBalancesResponseSchema } from './schemas.js'
import { operation } from '../manifest.js'
import { balancesManifest } from './manifest.js'

export interface BalanceRoutesOptions {
  /** the instance every conversion uses, so total_usd_value is worth what a drain would convert at */
  exchangeRates: ExchangeRates
  /** live wallets' receiving addresses and token contracts */
  receiving: LiveReceiving
}

const ENVIRONMENT_NOTE = 'A development key reads the sandbox, a production key live money.'
const WHAT_COUNTS =
  "Each balance is available money: posted credits less posted debits and less debits reserved by pending entries. Money on its way in (pending credits) is not counted until it is posted; each wallet's pending_incoming and pending_outgoing show both sides."

/** The operation that reads one currency's balance. */
const CURRENCY_OPERATIONS = { usdc: 'balanceControllerGetUSDCBalance', eurc: 'balanceControllerGetEURCBalance' } as const satisfies Record<WalletCurrency, string>

const total = (holdings: readonly Holding[], currency: WalletCurrency) =>
  holdings.reduce((sum, holding) => (holding.currency === currency ? sum + holding.available : sum), 0n)

export const balanceRoutes: FastifyPluginAsyncTypebox<BalanceRoutesOptions> = async (app, options) => {
  /** The caller's holdings in `currencies`, wallet by wallet, from the ledger's stored sums. */
  async function callerHoldings(request: FastifyRequest, currencies: readonly WalletCurrency[]): Promise<Holding[]> {
    const { appId, environment } = callerOf(request)
    return holdingsOf(app.db, await walletsOf(app, ledgerEnvironmentOf(environment), appId, options.receiving), currencies)
  }

  /**
   * USDC at par plus EURC at the current EUR→USD mid-market rate, rounded down to the cent once
   * (EURC converts into USDC's micro-units, rounded down, before the sum is). A rate is asked for
   * only when there is EURC to convert; none fresh is 503 with Retry-After, never a guess.
   */
  async function usdCentsOf(environment: LedgerEnvironment, holdings: readonly Holding[]): Promise<bigint> {
    const eurc = total(holdings, 'eurc')
    let usdc = total(holdings, 'usdc')
    if (eurc > 0n) {
      const rate = await options.exchangeRates.current(app.db, environment, 'eur', 'usd')
      usdc += convert(eurc, 'eurc', 'usdc', rate.midmarket)
    }
    return convert(usdc, 'usdc', 'usd', '1')
  }

  app.route({
    ...operation(balancesManifest, 'balanceControllerGetAllBalances'),
    schema: {
      tags: ['balances'],
      summary: "The application's USDC and EURC balances and their worth in US dollars",
      description: `Both currencies over all the application's wallets, each with every wallet's part, and total_usd_value: USDC at par plus EURC at the current EUR→USD mid-market rate (the rate GET /exchange-rate/eur-to-usd shows), rounded down to the cent. ${WHAT_COUNTS} ${ENVIRONMENT_NOTE} 503 with Retry-After when there is EURC and no fresh rate (live: an operator loads rates).`,
      response: { 200: AllBalancesResponseSchema, ...errorResponses(401, 403, 429, 503) },
    },
    handler: async (request): Promise<AllBalancesResponse> => {
      const holdings = await callerHoldings(request, WALLET_CURRENCIES)
      return toAllBalances(holdings, await usdCentsOf(ledgerEnvironmentOf(callerOf(request).environment), holdings), options.receiving)
    },
  })

  for (const currency of WALLET_CURRENCIES) {
    app.route({
      ...operation(balancesManifest, CURRENCY_OPERATIONS[currency]),
      schema: {
        tags: ['balances'],
        summary: `The application's ${currency.toUpperCase()} balance`,
        description: `${currency.toUpperCase()} over all the application's wallets, with each wallet's part. ${WHAT_COUNTS} ${ENVIRONMENT_NOTE}`,
        response: { 200: AggregatedBalanceResponseSchema, ...errorResponses(401, 403, 429) },
      },
      handler: async (request): Promise<AggregatedBalanceResponse> => toAggregatedBalance(currency, await callerHoldings(request, [currency]), options.receiving),
    })
  }
}
