import type { LedgerEnvironment } from '../ledger/ledger.js'

/**
 * The domain events: what one module tells the others that subscribe, inside the transaction of
 * the change (Transaction.publish; the subscribers are declared in src/events/hooks.ts). Unlike
 * the webhook events of the outbox, they never leave the process and are never stored: a
 * subscriber's handler runs before publish returns, on the publisher's transaction, and its
 * refusal (a thrown error) rolls the whole change back.
 */

/**
 * The funds a transfer or payment intent awaited arrive (transfers' receiveFunds), published once
 * the arrival is judged acceptable and before the transfer records it: a subscriber's refusal
 * means the funds do not arrive.
 */
export interface FundsArrived {
  type: 'transfer.funds_arrived'
  family: 'transfer' | 'payment_intent'
  /** the transfer's or payment intent's id */
  transferId: string
  appId: string
  environment: LedgerEnvironment
  /** what arrived, in the smallest unit of the transfer's currency */
  amount: bigint
  /** when, as the transfer records it (ISO 8601) */
  at: string
}

/**
 * A deposit seen on chain has its confirmations (src/chains/), published in the transaction that
 * marks it confirmed: the module owning the receiving address credits it (a liquidation address's
 * drain, a wallet, a payment intent or direct-wallet transfer) and says so in `credited`. A
 * subscriber's refusal (a domain error: a deactivated address, an intent already paid, an amount
 * other than the one awaited) rolls that back, and the chains module holds the deposit instead.
 */
export interface ChainDepositConfirmed {
  type: 'chain.deposit_confirmed'
  depositId: string
  chain: string
  environment: LedgerEnvironment
  appId: string
  ownerType: ReceivingOwnerType
  ownerId: string
  /** the token's ledger currency */
  currency: 'usdc' | 'eurc'
  /** in the currency's smallest unit */
  amount: bigint
  txHash: string
  fromAddress: string
  /** when it was confirmed (ISO 8601) */
  at: string
  /** set by the handler that credited it: what the funds became ({ type: 'drain', id }) */
  credited: { type: string; id: string } | undefined
}

/**
 * A live payout on chain moved (src/chains/sender.ts), published in the transaction that records
 * it: the module that asked for it (`ownerType`) moves its drain or transfer along with it.
 * `submitted`: broadcast, `txHash` the transaction sent; `confirmed`: mined with its
 * confirmations, `txHash` the one mined (a replacement's, perhaps); `failed`: it reverted, `reason`.
 */
export interface ChainPayoutUpdated {
  type: 'chain.payout_updated'
  payoutId: string
  chain: string
  environment: LedgerEnvironment
  appId: string
  ownerType: PayoutOwnerType
  ownerId: string
  status: 'submitted' | 'confirmed' | 'failed'
  /** undefined only for a payout refused before anything was sent (the token refused the transfer) */
  txHash: string | undefined
  reason: string | undefined
  /** ISO 8601 */
  at: string
}

/** What asks for a live payout: a drain, a drain's refund to its return address, or a transfer or payment intent. */
export type PayoutOwnerType = 'drain' | 'drain_refund' | 'transfer'

/** What a receiving address is for (src/chains/tables.ts): the module that credits its deposits. */
export type ReceivingOwnerType = 'liquidation_address' | 'wallet' | 'transfer'

/** Every domain event, told apart by `type`. */
export type DomainEvent = FundsArrived | ChainDepositConfirmed | ChainPayoutUpdated

export type DomainEventType = DomainEvent['type']
