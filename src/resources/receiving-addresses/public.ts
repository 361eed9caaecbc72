import { claimReceivingAddress } from '../../chains/receiving.js'
import type { Db } from '../../db/database.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { ReceivingAddressesRepository } from './repository.js'

/*
 * What other modules may use of receiving addresses (the only file of this folder they import):
 * a liquidation address taking one.
 */

/** The path and guide a refused live liquidation address names, so its caller knows how to get an address. */
export const RECEIVING_ADDRESSES_HOW = 'POST /api/v0/receiving-addresses, docs/chains.md'

/**
 * Gives the application's free receiving address `address` (on `chain`, for `currency`) to the
 * liquidation address being created, in the caller's transaction. Live, the chains module's
 * address is claimed too, so its deposits become the liquidation address's drains. False when
 * `address` is not such an address (unknown, another's, another chain's or currency's, or taken).
 */
export async function takeReceivingAddress(
  db: Db,
  claim: { environment: LedgerEnvironment; appId: string; chain: string; currency: string; address: string; liquidationAddressId: string },
): Promise<boolean> {
  const taken = await new ReceivingAddressesRepository(db).take(claim.environment, claim.appId, claim.chain, claim.currency, claim.address, claim.liquidationAddressId)
  if (!taken || claim.environment !== 'live') return taken
  return claimReceivingAddress(db, claim.address, { appId: claim.appId, chain: claim.chain, currency: claim.currency, liquidationAddressId: claim.liquidationAddressId })
}
