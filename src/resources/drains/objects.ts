import { type Currency, formatAmount } from '../../ledger/amount.js'
import { livemodeOf } from '../../ledger/environment.js'
import { waitingFor } from '../../ledger/simulated-rails.js'
import type { DrainRow } from './repository.js'
import type { Drain, DrainDestination, DrainState } from './schemas.js'

/** The drain as the API and its events show it: amounts as decimal strings of their currency. */
export function toDrain(row: DrainRow): Drain {
  const currency = row.currency as Currency & Drain['currency']
  const destination = JSON.parse(row.destination) as DrainDestination
  const destinationCurrency = destination.currency as Currency
  const amount = BigInt(row.amount)
  const fee = row.developer_fee === null ? 0n : BigInt(row.developer_fee)
  const receipt: Drain['receipt'] = {
    initial_amount: formatAmount(amount, currency),
    developer_fee: formatAmount(fee, currency),
    subtotal_amount: formatAmount(row.subtotal_amount === null ? amount - fee : BigInt(row.subtotal_amount), currency),
    destination_currency: destination.currency,
  }
  if (row.exchange_rate !== null) receipt.exchange_rate = row.exchange_rate
  if (row.converted_amount !== null) receipt.converted_amount = formatAmount(BigInt(row.converted_amount), destinationCurrency)
  if (row.outgoing_amount !== null) {
    receipt.gas_fee = formatAmount(0n, destinationCurrency)
    receipt.outgoing_amount = formatAmount(BigInt(row.outgoing_amount), destinationCurrency)
  }
  const drain: Drain = {
    id: row.id,
    customer_id: row.customer_id,
    liquidation_address_id: row.liquidation_address_id,
    state: row.state as DrainState,
    amount: formatAmount(amount, currency),
    currency,
    deposit_tx_hash: row.deposit_tx_hash,
    source_payment_rail: row.source_payment_rail as Drain['source_payment_rail'],
    destination,
    receipt,
    livemode: livemodeOf(row.environment),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
  if (row.from_address !== null) drain.from_address = row.from_address
  if (row.destination_tx_hash !== null) drain.destination_tx_hash = row.destination_tx_hash
  if (row.refund_tx_hash !== null) drain.refund_tx_hash = row.refund_tx_hash
  if (row.return_reason !== null) drain.return_details = { reason: row.return_reason }
  const waiting = waitingFor(row.environment, row.state, destination)
  if (waiting !== undefined) drain.waiting_for = waiting
  return drain
}
