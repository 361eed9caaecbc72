import { formatAmount } from '../ledger/amount.js'
import { livemodeOf } from '../ledger/environment.js'
import type { ChainDepositRow, DepositStatus } from './repository.js'

/**
 * A deposit seen on chain as the API and the `deposit.*` events show it (the deposits resource's
 * schema describes it): what arrived, where, its confirmations, and what it became.
 */
export interface DepositObject {
  id: string
  chain: string
  currency: string
  /** a decimal string in the currency */
  amount: string
  from_address: string
  to_address: string
  tx_hash: string
  log_index: number
  block_number: number
  status: DepositStatus
  confirmations: number
  confirmations_required: number
  /** what the deposit is for: the object owning the receiving address */
  destination: { type: string; id: string | null }
  /** what it became once credited ({ type: 'drain', id }); null until then, and for a held deposit */
  credited_to: { type: string; id: string } | null
  /** why it is held, removed or reversed; null otherwise */
  reason: string | null
  livemode: boolean
  created_at: string
  updated_at: string
}

export function toDeposit(row: ChainDepositRow, confirmationsRequired: number): DepositObject {
  return {
    id: row.id,
    chain: row.chain,
    currency: row.currency,
    amount: formatAmount(BigInt(row.amount), row.currency as 'usdc' | 'eurc'),
    from_address: row.from_address,
    to_address: row.to_address,
    tx_hash: row.tx_hash,
    log_index: Number(row.log_index),
    block_number: Number(row.block_number),
    status: row.status as DepositStatus,
    confirmations: Math.min(Number(row.confirmations), confirmationsRequired),
    confirmations_required: confirmationsRequired,
    destination: { type: row.owner_type, id: row.owner_id },
    credited_to: row.credited_type === null || row.credited_id === null ? null : { type: row.credited_type, id: row.credited_id },
    reason: row.reason,
    livemode: livemodeOf(row.environment),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
