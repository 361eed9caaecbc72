import type { TableDeclaration } from '../../modules/module.js'

/** A deposit to a liquidation address and its forwarding (src/resources/drains/); amounts are integer text of the smallest unit. */
export interface DrainsTable {
  id: string
  environment: string
  app_id: string
  customer_id: string
  liquidation_address_id: string
  state: string
  amount: string
  currency: string
  deposit_tx_hash: string
  from_address: string | null
  source_payment_rail: string
  /** JSON: the destination as the address named it when the deposit arrived */
  destination: string
  developer_fee: string | null
  subtotal_amount: string | null
  exchange_rate: string | null
  converted_amount: string | null
  outgoing_amount: string | null
  destination_tx_hash: string | null
  refund_tx_hash: string | null
  return_reason: string | null
  /** the entry reserving the payout while it is in flight */
  pending_entry_id: string | null
  /** when the scheduler advances it; null once it has ended */
  next_step_at: string | null
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    drains: DrainsTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const drainsTables: readonly TableDeclaration[] = [{ name: 'drains', appDeletion: 'kept', reason: 'money records: what the ledger entries of deposits are for' }]
