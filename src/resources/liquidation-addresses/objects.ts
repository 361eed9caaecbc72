import type { LiquidationAddressRow } from './repository.js'
import type { LiquidationAddress } from './schemas.js'

/** The contract's response object: request-only fields are stored but never returned. */
export function toLiquidationAddress(row: LiquidationAddressRow): LiquidationAddress {
  const out: LiquidationAddress = {
    id: row.id,
    state: row.state as LiquidationAddress['state'],
    customer_id: row.customer_id,
    chain: row.chain as LiquidationAddress['chain'],
    currency: row.currency as LiquidationAddress['currency'],
    address: row.address,
    created_at: row.created_at,
    updated_at: row.updated_at,
    destination_payment_rail: row.destination_payment_rail as LiquidationAddress['destination_payment_rail'],
    destination_currency: row.destination_currency as LiquidationAddress['destination_currency'],
  }
  if (row.external_account_id !== null) out.external_account_id = row.external_account_id
  if (row.prefunded_account_id !== null) out.prefunded_account_id = row.prefunded_account_id
  if (row.bridge_wallet_id !== null) out.bridge_wallet_id = row.bridge_wallet_id
  if (row.custom_developer_fee_percent !== null) out.custom_developer_fee_percent = row.custom_developer_fee_percent
  return out
}
