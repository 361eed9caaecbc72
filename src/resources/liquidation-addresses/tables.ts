import type { TableDeclaration } from '../../modules/module.js'

export interface LiquidationAddressesTable {
  id: string
  app_id: string
  customer_id: string
  state: string
  chain: string
  currency: string
  address: string
  /** canonical address (EVM lower-cased): the service-wide uniqueness key with chain */
  address_key: string
  external_account_id: string | null
  prefunded_account_id: string | null
  bridge_wallet_id: string | null
  destination_payment_rail: string
  destination_currency: string
  destination_wire_message: string | null
  destination_sepa_reference: string | null
  destination_ach_reference: string | null
  destination_address: string | null
  destination_blockchain_memo: string | null
  return_address: string | null
  custom_developer_fee_percent: string | null
  created_at: string
  updated_at: string
}

/** Its tables, by name, in the Database type Kysely queries (src/db/schema.ts). */
declare module '../../db/schema.js' {
  interface Database {
    liquidation_addresses: LiquidationAddressesTable
  }
}

/** Its tables in the order it creates them, and what `apps delete` does with each. */
export const liquidationAddressesTables: readonly TableDeclaration[] = [{ name: 'liquidation_addresses', appDeletion: 'removed' }]
