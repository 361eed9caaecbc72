import { livemodeOf } from '../../ledger/environment.js'
import type { ReceivingAddressRow } from './repository.js'
import type { ReceivingAddress } from './schemas.js'

export function toReceivingAddress(row: ReceivingAddressRow): ReceivingAddress {
  return {
    id: row.id,
    address: row.address,
    chain: row.chain as ReceivingAddress['chain'],
    currency: row.currency as ReceivingAddress['currency'],
    livemode: livemodeOf(row.environment),
    liquidation_address_id: row.liquidation_address_id,
    created_at: row.created_at,
  }
}
