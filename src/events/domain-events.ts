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

/** Every domain event, told apart by `type`. */
export type DomainEvent = FundsArrived

export type DomainEventType = DomainEvent['type']
