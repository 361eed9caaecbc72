import type { TableDeclaration } from '../../modules/module.js'

/**
 * A transfer or a payment intent (src/resources/transfers/): money into one of the application's
 * wallets, out of one, or between two currencies of one. Amounts are integer text of the smallest
 * unit of their currency; source, destination and deposit_instructions are JSON.
 */
export interface TransfersTable {
  id: string
  environment: string
  app_id: string
  /** direct_bank, direct_wallet, external_bank, external_stablecoin, stablecoin_conversion, payment_intent_bank, payment_intent_stablecoin */
  kind: string
  state: string
  /** the application's wallet it moves money into or out of */
  wallet_id: string | null
  /** the currency of amount and developer_fee (the source's) */
  currency: string
  /** null while a flexible amount has not arrived */
  amount: string | null
  developer_fee: string
  destination_currency: string
  source: string
  destination: string
  deposit_instructions: string | null
  customer: string | null
  exchange_rate: string | null
  converted_amount: string | null
  destination_tx_hash: string | null
  refund_tx_hash: string | null
  return_reason: string | null
  /** the entry reserving the movement while it is in flight */
  pending_entry_id: string | null
  /** when the scheduler advances it; null while it waits for funds or once it has ended */
  next_step_at: string | null
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    transfers: TransfersTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const transfersTables: readonly TableDeclaration[] = [{ name: 'transfers', appDeletion: 'kept', reason: 'money records: what the ledger entries of transfers and payment intents are for' }]
