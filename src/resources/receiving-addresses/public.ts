import { claimReceivingAddress } from '../../chains/receiving.js'
import type { Db } from '../../db/database.js'
import type { BoundQuery } from '../../db/prepared.js'
import { type ReceivingAddressClaim, ReceivingAddressesRepository } from './repository.js'

export type { ReceivingAddressClaim } from './repository.js'

/*
 * What other modules may use of receiving addresses (the only file of this folder they import):
 * a liquidation address taking one.
 */

/** The path and guide a refused live liquidation address names, so its caller knows how to get an address. */
export const RECEIVING_ADDRESSES_HOW = 'POST /api/v0/receiving-addresses, docs/chains.md'

/**
 * Gives the application's free receiving address `address` (on `chain`, for `currency`) to the
 * liquidation address being created, in the caller's transaction: the statement, to send with
 * others (`pipelined`); its rows go to `receivingAddressTaken`.
 */
export function takeReceivingAddress(db: Db, claim: ReceivingAddressClaim): BoundQuery<{ id: string }> {
  return new ReceivingAddressesRepository(db).take(claim)
}

/**
 * Whether `takeReceivingAddress`, which answered `taken`, gave the address. Live, the chains
 * module's address is claimed too, so its deposits become the liquidation address's drains. False
 * when `address` is not such an address (unknown, another's, another chain's or currency's, or
 * taken).
 */
export async function receivingAddressTaken(db: Db, claim: ReceivingAddressClaim, taken: readonly { id: string }[]): Promise<boolean> {
  if (taken.length !== 1 || claim.environment !== 'live') return taken.length === 1
  return claimReceivingAddress(db, claim.address, { appId: claim.appId, chain: claim.chain, currency: claim.currency, liquidationAddressId: claim.liquidationAddressId })
}
