import type { ExchangeRate } from '../../ledger/rates.js'
import type { ExchangeRateBody } from './schemas.js'

/** The API's rate from the module's: kept apart, as the module knows no API schema. */
export function toExchangeRate(rate: ExchangeRate): ExchangeRateBody {
  return { from: rate.from, to: rate.to, midmarket_rate: rate.midmarket, buy_rate: rate.buy, sell_rate: rate.sell, timestamp: rate.asOf }
}
