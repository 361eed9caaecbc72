import { randomBytes } from 'node:crypto'
import { base58 } from '@scure/base'
import { type Currency, parseAmount } from './amount.js'

/**
 * What drains and transfers share about the rails they pay out on, as this platform simulates
 * them: which rails are batched (ACH) or on a chain, the references a processed payment carries,
 * the sandbox's amounts that force a failure, and how writes to a hot account are spread.
 */

export const ACH_RAILS: ReadonlySet<string> = new Set(['ach', 'ach_push', 'ach_same_day'])
export const CHAIN_RAILS: ReadonlySet<string> = new Set(['ethereum', 'solana', 'polygon', 'avalanche_c_chain', 'base', 'arbitrum', 'optimism', 'stellar', 'tron', 'bridge_wallet'])

/**
 * Why live money can't be paid out on `rail` (named by the request's `field`): every rail but a
 * chain's and a wallet's is fiat, and paying out on fiat needs the payment provider's connector,
 * which this platform does not have; undefined for a chain or a wallet.
 */
export function liveFiatRefusal(field: string, rail: string): string | undefined {
  if (CHAIN_RAILS.has(rail)) return undefined
  return `${field} ${rail} is a fiat rail: live payouts on fiat rails need the payment provider's connector, which this platform does not have yet; with a production key, pay out to an address on a chain or into one of the application's wallets (docs/chains.md#what-waits)`
}

/** The sandbox's amounts that take a drain or a transfer down a failure path (docs/drains.md, docs/transfers.md). */
export const SANDBOX_FAILURES: Readonly<Record<string, 'undeliverable' | 'returned' | 'error'>> = {
  '13.01': 'undeliverable',
  '13.02': 'returned',
  '13.03': 'error',
}

/** The failure `units` of `currency` forces in the sandbox, if any; live money never fails on purpose. */
export function sandboxFailureOf(environment: string, units: bigint, currency: Currency): 'undeliverable' | 'returned' | 'error' | undefined {
  if (environment !== 'sandbox') return undefined
  for (const [text, failure] of Object.entries(SANDBOX_FAILURES)) if (parseAmount(text, currency) === units) return failure
  return undefined
}

/**
 * Whether a movement's next step would pay out of the platform for real: live money going
 * anywhere but one of the application's wallets. The platform does not send live payouts yet, so
 * such a movement is not scheduled: it waits, funds held, where it is (docs/chains.md); only the
 * sandbox simulates payouts.
 */
export function awaitsPayoutSender(environment: string, destination: { bridge_wallet_id?: string | null | undefined }): boolean {
  return environment === 'live' && (destination.bridge_wallet_id === undefined || destination.bridge_wallet_id === null)
}

/**
 * What a movement in `state` waits for that is not the payer or the scheduler: a live payout in
 * `funds_received` waits for the platform's payout sender (docs/chains.md#what-waits); undefined
 * otherwise.
 */
export function waitingFor(environment: string, state: string, destination: { bridge_wallet_id?: string | null | undefined }): 'payout_sender' | undefined {
  return state === 'funds_received' && awaitsPayoutSender(environment, destination) ? 'payout_sender' : undefined
}

/** Writes to hot accounts (the fee account, the outside world's) spread over this many rows. */
export const HOT_ACCOUNT_SHARDS = 8

/** The row of a hot account a movement writes to: its id's last byte, spread over `shards`. */
export function hotShardOf(id: string, shards: number = HOT_ACCOUNT_SHARDS): number {
  return Number.parseInt(id.slice(-2), 16) % shards
}

/** A transaction hash of the chain's own form, for what the sandbox makes up. */
export function transactionHash(rail: string): string {
  if (rail === 'solana') return base58.encode(randomBytes(64))
  if (rail === 'stellar' || rail === 'tron') return randomBytes(32).toString('hex')
  return `0x${randomBytes(32).toString('hex')}`
}

function randomDigits(count: number): string {
  let digits = ''
  for (const byte of randomBytes(count)) digits += String(byte % 10)
  return digits
}

/** What a processed payment on a bank rail carries: an ACH trace number, a wire's IMAD; none on other rails. */
export function bankReferenceOf(rail: string, nowIso: string): { trace_number: string } | { imad: string } | undefined {
  if (ACH_RAILS.has(rail)) return { trace_number: randomDigits(15) }
  if (rail === 'wire') return { imad: `${nowIso.slice(0, 10).replaceAll('-', '')}MMQFMP${randomDigits(6)}` }
  return undefined
}
