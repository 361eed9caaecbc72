import type { ExchangeRates } from './rates.js'

/** How long each step of a sandbox movement takes (a live one waits for its rail instead). */
export interface MoneyTimings {
  /** each step on chains, a wallet, wire, SEPA, SWIFT and SPEI */
  fastDelayMs: number
  /** each step on ACH (batched by the banks: slower) */
  achDelayMs: number
}

/** What every movement of money (drains, transfers, deposits seen on chain) is run with. */
export interface MoneyContext {
  rates: ExchangeRates
  timings: MoneyTimings
  now: () => number
  /** rows each hot account is spread over; HOT_ACCOUNT_SHARDS when unset (bench:money measures others) */
  hotAccountShards?: number
}
