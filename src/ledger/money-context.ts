import type { Db } from '../db/database.js'
import type { ExchangeRates } from './rates.js'

/** How long each step of a sandbox movement takes (a live one waits for its rail instead). */
export interface MoneyTimings {
  /** each step on chains, a wallet, wire, SEPA, SWIFT and SPEI */
  fastDelayMs: number
  /** each step on ACH (batched by the banks: slower) */
  achDelayMs: number
}

/**
 * Where live money arrives on chain: src/chains/receiving.ts's Receiving, seen from the money it
 * moves (declared here so the ledger's context does not import the chains module).
 */
export interface LiveReceiving {
  /** why live money cannot arrive on `chain` in `currency`, or undefined when it can */
  offReason(chain: string, currency: string | undefined): string | undefined
  /** a new receiving address on `chain`, recorded for its owner in the caller's transaction */
  allocate(db: Db, chain: string, owner: { appId: string; ownerType: 'transfer' | 'wallet'; ownerId: string; currency: 'usdc' | 'eurc' | undefined }, now: number): Promise<string>
  /** the contract of `currency` on `chain` as configured (lower-case), or undefined when it is off */
  tokenContract(chain: string, currency: 'usdc' | 'eurc'): string | undefined
}

/** A payout a drain or transfer asks the chain's sender for, in the smallest unit of `currency`. */
export interface PayoutRequest {
  chain: string
  environment: 'live'
  appId: string
  /** a drain's payout and its refund are two owners: each is paid at most once */
  ownerType: 'drain' | 'drain_refund' | 'transfer'
  ownerId: string
  currency: 'usdc' | 'eurc'
  toAddress: string
  amount: bigint
}

/**
 * Where live money leaves on chain: src/chains/payouts.ts's LivePayoutQueue, seen from the money
 * it moves (declared here so the ledger's context does not import the chains module).
 */
export interface LivePayouts {
  /** why a live payout of `currency` cannot be sent on `rail`, or undefined when the sender will send it */
  offReason(rail: string, currency: string): string | undefined
  /** queues the payout in the caller's transaction; asking twice for one owner is one payout */
  request(db: Db, payout: PayoutRequest, now: number): Promise<void>
}

/** What every movement of money (drains, transfers, deposits seen on chain) is run with. */
export interface MoneyContext {
  rates: ExchangeRates
  timings: MoneyTimings
  now: () => number
  /** rows each hot account is spread over; HOT_ACCOUNT_SHARDS when unset (bench:money measures others) */
  hotAccountShards?: number
  /** live receiving addresses; needed only where live money is asked for on chain (a payment intent, a direct-wallet transfer) */
  receiving?: LiveReceiving
  /** live payouts on chain; unset: none is sent (a live payout waits, docs/chains.md#what-waits) */
  payouts?: LivePayouts
}
