import type { Db } from '../../db/database.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { toTransfer } from './objects.js'
import type { Recent } from '../../db/newest-first-page.js'
import { type TransferFamily, TransfersRepository } from './repository.js'
import type { Transfer } from './schemas.js'

/*
 * What other modules may use of transfers (the only file of this folder they import): payment
 * intents are transfers of their own family, created by the same routes and run by the same
 * lifecycle, so they share its requests' fields, its routes and its schemas; a hosted checkout
 * page makes a payment intent, reads it, and in the sandbox makes its funds arrive.
 */

export { createTransfer, type NewTransfer, receiveFunds, type TransferContext } from './lifecycle.js'
/** An operator's tools for money in whose funds are held in clearing (src/resources/held/ calls them). */
export { HELD_TRANSFER_STATES, type HeldTransferOutcome, heldTransfers, refundHeldTransfer, releaseHeldTransfer, retryHeldTransfer } from './lifecycle.js'
export { bankInstructions, checkAchReference, depositAddress, FIATS, INBOUND_NETWORKS, oneOf, railFor, STABLECOINS } from './requests.js'
export { creationRoutes, followRoutes, type TransferRoutesOptions } from './routes.js'
export { TRANSFER_STATES } from './schemas.js'
export { type CustomerDetails, PAYER_EXAMPLE, PaymentIntentSchema, type Transfer } from './schemas.js'

/** The application's transfer or payment intent (`family`) as the API shows it, or undefined (another application's or environment's is undefined). */
export async function findTransfer(db: Db, environment: LedgerEnvironment, appId: string, family: TransferFamily, id: string): Promise<Transfer | undefined> {
  const row = await new TransfersRepository(db).find(environment, appId, family, id)
  return row === undefined ? undefined : toTransfer(row)
}

/** The console's list: the application's newest transfers or payment intents (`family`) in the environment, as the API shows them. */
export async function recentTransfers(db: Db, environment: LedgerEnvironment, appId: string, family: TransferFamily, recent: Recent): Promise<Transfer[]> {
  return (await new TransfersRepository(db).recent(environment, appId, family, recent)).map(toTransfer)
}
