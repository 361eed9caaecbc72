import { type Currency, formatAmount } from '../../ledger/amount.js'
import { livemodeOf } from '../../ledger/environment.js'
import { waitingFor } from '../../ledger/simulated-rails.js'
import { isInbound, type TransferRow } from './repository.js'
import type { CustomerDetails, DepositInstructions, Endpoint, Transfer, TransferState } from './schemas.js'

const money = (units: string | null, currency: Currency) => (units === null ? null : formatAmount(BigInt(units), currency))

/** A transfer (or payment intent) row as the API answers it: amounts as decimal strings with all of their currency's decimals. */
export function toTransfer(row: TransferRow): Transfer {
  const currency = row.currency as Currency
  const destinationCurrency = row.destination_currency as Currency
  const fee = BigInt(row.developer_fee)
  const outbound = !isInbound(row)
  const subtotal = row.amount === null ? null : outbound ? BigInt(row.amount) : BigInt(row.amount) - fee
  const receipt: Transfer['receipt'] = {
    initial_amount: row.amount === null ? null : formatAmount(outbound ? BigInt(row.amount) + fee : BigInt(row.amount), currency),
    developer_fee: formatAmount(fee, currency),
    subtotal_amount: subtotal === null ? null : formatAmount(subtotal, currency),
    destination_currency: destinationCurrency,
  }
  if (row.exchange_rate !== null) receipt.exchange_rate = row.exchange_rate
  if (row.converted_amount !== null) {
    receipt.converted_amount = formatAmount(BigInt(row.converted_amount), destinationCurrency)
    receipt.final_amount = receipt.converted_amount
  }
  const transfer: Transfer = {
    id: row.id,
    type: row.kind,
    state: row.state as TransferState,
    amount: money(row.amount, currency),
    currency,
    developer_fee: formatAmount(fee, currency),
    source: JSON.parse(row.source) as Endpoint,
    destination: JSON.parse(row.destination) as Endpoint,
    receipt,
    livemode: livemodeOf(row.environment),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
  if (row.deposit_instructions !== null) transfer.source_deposit_instructions = JSON.parse(row.deposit_instructions) as DepositInstructions
  if (row.customer !== null) transfer.customer = JSON.parse(row.customer) as CustomerDetails
  if (row.return_reason !== null) transfer.return_reason = row.return_reason
  if (row.destination_tx_hash !== null) transfer.destination_tx_hash = row.destination_tx_hash
  if (row.refund_tx_hash !== null) transfer.refund_tx_hash = row.refund_tx_hash
  const waiting = waitingFor(row.environment, row.state, transfer.destination)
  if (waiting !== undefined) transfer.waiting_for = waiting
  return transfer
}
